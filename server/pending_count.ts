/**
 * Work started and not finished yet, counted, with a way to wait until none is left: the
 * requests in flight (shutdown waits for them) and the envelopes on their way to the ingest
 * (monitoring's flush waits for them).
 *
 * A counter rather than a Set of what is pending, for the garbage collector: V8 gives a Set or
 * Map a new table every few additions and deletions, and for one that has lived through a few
 * collections it makes that table straight in the old generation (OrderedHashTable::Rehash),
 * where only a full collection frees it. A long-lived Set that took each envelope while it was
 * sent, and the SDK transport's own, grew the server's old generation by 1 MB a second under
 * `GET /` load at the default sample rate; with counters, 0.2 (BENCHMARKS.md, round 12).
 */
import { settlesWithin } from "./settles_within.ts";

/** A count of pending work that can be waited on. */
export class PendingCount {
  #count = 0;
  #idle: PromiseWithResolvers<void> | undefined;

  /** Pieces of work started and not finished. */
  get count(): number {
    return this.#count;
  }

  /** One piece of work started: call {@link done} when it ends, however it ends. */
  add(): void {
    this.#count++;
  }

  /** One piece of work ended. Bound once, so it is passed as a callback without a closure. */
  readonly done = (): void => {
    this.#count--;
    if (this.#count === 0 && this.#idle) {
      this.#idle.resolve();
      this.#idle = undefined;
    }
  };

  /**
   * Count `promise` until it settles, fulfilled or rejected. A rejection is left to whoever
   * else holds the promise: this adds a handler, so it is never reported as unhandled here.
   */
  track(promise: PromiseLike<unknown>): void {
    this.add();
    promise.then(this.done, this.done);
  }

  /**
   * Resolves true once nothing is pending, or false when `timeoutMs` passes first. Without a
   * timeout it waits as long as it takes.
   *
   * @example
   * await pending.idle(2_000); // false if work is still pending after 2 s
   */
  idle(timeoutMs?: number): Promise<boolean> {
    if (this.#count === 0) return Promise.resolve(true);
    this.#idle ??= Promise.withResolvers<void>();
    const idle = this.#idle.promise;
    return timeoutMs === undefined ? idle.then(() => true) : settlesWithin(idle, timeoutMs);
  }
}
