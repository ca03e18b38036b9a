/**
 * Requests being handled, counted so shutdown can wait for them. `Deno.serve`'s own graceful
 * `shutdown()` (Deno 2.9) cuts request bodies that are still arriving: the handler's read fails
 * with BadResource and an upload in progress is answered 400 and lost. So the entries wait here
 * until no handler is running, and only then call `shutdown()` to close the listener and the
 * idle keep-alive connections.
 */
import type { Handler } from "../http/handler.ts";
import { settlesWithin } from "../settles_within.ts";

/** A counter of running handlers with a way to wait until none is left. */
export class InFlight {
  #count = 0;
  #idle: PromiseWithResolvers<void> | undefined;

  /** Handlers running now. */
  get count(): number {
    return this.#count;
  }

  /**
   * Wrap a handler so each call counts from its start until its response (or error) is ready,
   * which for the tunnel is after the whole body was read and forwarded.
   */
  track(handler: Handler): Handler {
    return (req, info) => {
      this.#count++;
      let result: ReturnType<Handler>;
      try {
        result = handler(req, info);
      } catch (error) {
        this.#done();
        throw error;
      }
      if (!(result instanceof Promise)) {
        this.#done();
        return result;
      }
      return result.finally(() => this.#done());
    };
  }

  /** Resolves true once no handler is running, or false when `timeoutMs` passes first. */
  idle(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    this.#idle ??= Promise.withResolvers<void>();
    return settlesWithin(this.#idle.promise, timeoutMs);
  }

  #done(): void {
    this.#count--;
    if (this.#count === 0 && this.#idle) {
      this.#idle.resolve();
      this.#idle = undefined;
    }
  }
}
