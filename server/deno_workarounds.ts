/** Where Deno 2.9 falls short, each with the upstream issue; its test fails once one is fixed. */
import type { Handler } from "./http/request_context.ts";

// 1. denoland/deno#36809: shutdown() breaks bodies still arriving; call it once no handler runs.

/** A counter of running handlers with a way to wait until none is left. */
export class InFlight {
  #count = 0;
  #idle = Promise.withResolvers<void>();

  get count(): number {
    return this.#count;
  }

  /** Wrap a handler so each call counts until its response (or error) is ready. */
  track(handler: Handler): Handler {
    return (req, info) => {
      this.#count++;
      let res: ReturnType<Handler> | undefined;
      try {
        res = handler(req, info);
        return res instanceof Promise ? res.finally(() => this.#done()) : res;
      } finally {
        if (!(res instanceof Promise)) this.#done(); // answered or thrown at once
      }
    };
  }

  /** Resolves true once no handler is running, or false when `timeoutMs` passes first. */
  async idle(timeoutMs: number): Promise<boolean> {
    if (this.#count === 0) return true;
    let timer;
    const late = new Promise<false>((resolve) => timer = setTimeout(resolve, timeoutMs, false));
    const idle = await Promise.race([this.#idle.promise.then(() => true), late]);
    clearTimeout(timer);
    return idle;
  }

  #done(): void {
    if (--this.#count > 0) return;
    this.#idle.resolve();
    this.#idle = Promise.withResolvers<void>();
  }
}

// 2. denoland/deno#32862: `deno serve` shuts down at once on SIGINT/SIGTERM; serve.ts defers it.

/** Hold the next `Deno.addSignalListener` listener for each of `signals`; `release` runs them.
 * Call it after registering your own listeners, before the module finishes loading. */
export function holdServeShutdown(signals: readonly Deno.Signal[]): { release(): void } {
  const original = Deno.addSignalListener;
  const held: (() => void)[] = [];
  const seen = new Set<Deno.Signal>();
  Deno.addSignalListener = (signal, listener) => {
    if (!signals.includes(signal)) return original(signal, listener);
    held.push(listener);
    seen.add(signal);
    if (seen.size === signals.length) Deno.addSignalListener = original;
  };
  return {
    release() {
      Deno.addSignalListener = original;
      for (const listener of held.splice(0)) listener();
    },
  };
}

// 3. denoland/deno#10148: an accept error (EMFILE) ends the accept loop; listen again each second.

/** Where and how to listen; `onListen` is called once, on the first successful listen. */
export interface ListenOptions {
  readonly hostname: string;
  readonly port: number;
  readonly onListen?: (addr: Deno.NetAddr) => void;
  readonly onError?: (error: unknown) => Response | Promise<Response>;
}

/** A server that keeps listening; `shutdown` is `Deno.serve`'s graceful one, for every listener. */
export interface Listening {
  readonly addr: Deno.NetAddr;
  shutdown(): Promise<void>;
}

const RETRY_MS = 1_000;
// An outage is over once a new listener has run this long without failing.
const RECOVERED_AFTER_MS = 5_000;

/** Listen on `hostname:port` and keep listening; errors of the first listen are thrown. */
export function listen(options: ListenOptions, handler: Handler): Listening {
  // Every server started: an old one still serves the connections it accepted.
  const servers: Deno.HttpServer<Deno.NetAddr>[] = [];
  let stopping = false, outage = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const serve = (port: number, onListen: (addr: Deno.NetAddr) => void) => {
    const server = Deno.serve({ ...options, port, onListen }, handler);
    servers.push(server);
    server.finished.catch((error) => {
      if (stopping) return;
      if (!outage) {
        console.error(
          `server: accepting connections failed (${firstLine(error)}); connections already ` +
            `open are still served, new ones are refused until descriptors are free`,
        );
      }
      outage = true;
      retry();
    });
    return server;
  };

  const retry = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (stopping) return;
      try {
        serve(addr.port, () => {});
      } catch (error) {
        // With PORT=0 the permission covers port 0, not the port the first listen got.
        if (error instanceof Deno.errors.NotCapable) {
          return console.error(`server: cannot listen again: ${firstLine(error)}`);
        }
        return retry(); // still no descriptor for the listening socket
      }
      timer = setTimeout(() => {
        outage = false;
        console.error("server: accepting connections again");
      }, RECOVERED_AFTER_MS);
    }, RETRY_MS);
  };

  const addr = serve(options.port, (addr) => options.onListen?.(addr)).addr;
  return {
    addr,
    async shutdown() {
      stopping = true;
      clearTimeout(timer);
      await Promise.all(servers.map((server) => server.shutdown().catch(() => {})));
    },
  };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0];
}
