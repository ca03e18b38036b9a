/**
 * `Deno.serve` that outlives a failing accept. In Deno 2.9 an accept error (EMFILE when the
 * process runs out of file descriptors) ends the server's accept loop for good: the listening
 * socket is closed, `finished` rejects, and unless someone handles that the process exits 1.
 * Here the failure is logged once, connections already open keep being served, and the same
 * address is listened on again (with backoff) until descriptors are free.
 */
import type { Handler } from "../http/handler.ts";

/** Where and how to listen. */
export interface ListenOptions {
  readonly hostname: string;
  readonly port: number;
  /** Called once, on the first successful listen. */
  readonly onListen?: (addr: Deno.NetAddr) => void;
  /** The answer when the handler throws (Deno.serve's `onError`). */
  readonly onError?: (error: unknown) => Response | Promise<Response>;
  /** Receives the two lines of an outage: when it starts and when it is over. */
  readonly log?: (line: string) => void;
  /** Wait before listening again: starts at `min`, doubles up to `max` (ms). */
  readonly retryMs?: { readonly min: number; readonly max: number };
  /** An outage is over once a new listener has run this long without failing (ms). */
  readonly recoveredAfterMs?: number;
}

/** A server that keeps listening; `shutdown` is `Deno.serve`'s graceful one. */
export interface Listening {
  readonly addr: Deno.NetAddr;
  /** Stop listening, let open requests finish and close idle connections. */
  shutdown(): Promise<void>;
}

/**
 * Listen on `hostname:port` and keep listening. Errors of the first listen (address in use,
 * permission) are thrown as `Deno.serve` throws them.
 *
 * @example
 * const server = listen({ hostname: "127.0.0.1", port: 0 }, () => new Response("ok"));
 * await server.shutdown();
 */
export function listen(options: ListenOptions, handler: Handler): Listening {
  const log = options.log ?? ((line: string) => console.error(line));
  const { min, max } = options.retryMs ?? { min: 100, max: 2_000 };
  const recoveredAfterMs = options.recoveredAfterMs ?? 5_000;
  // Every server ever started: an old one still serves the connections it accepted.
  const servers: Deno.HttpServer<Deno.NetAddr>[] = [];
  let stopping = false;
  let outage = false;
  let waitMs = min;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const start = (port: number, onListen: (addr: Deno.NetAddr) => void) => {
    const server = Deno.serve(
      { hostname: options.hostname, port, onListen, onError: options.onError },
      handler,
    );
    servers.push(server);
    server.finished.catch((error) => {
      if (stopping) return;
      if (outage) {
        waitMs = Math.min(waitMs * 2, max);
      } else {
        outage = true;
        waitMs = min;
        log(
          `server: accepting connections failed (${describe(error)}); connections already open ` +
            `are still served, new ones are refused until descriptors are free`,
        );
      }
      retry();
    });
    if (outage) {
      clearTimeout(timer);
      timer = setTimeout(() => {
        outage = false;
        log("server: accepting connections again");
      }, recoveredAfterMs);
    }
    return server;
  };

  const retry = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (stopping) return;
      try {
        start(addr.port, () => {});
      } catch (error) {
        // With PORT=0 the permission covers port 0, not the port the first listen got.
        if (error instanceof Deno.errors.NotCapable) {
          log(`server: cannot listen again: ${describe(error)}`);
          return;
        }
        // Still no descriptor for the listening socket; try again later.
        waitMs = Math.min(waitMs * 2, max);
        retry();
      }
    }, waitMs);
  };

  const first = start(options.port, (addr) => options.onListen?.(addr));
  const addr = first.addr;
  return {
    addr,
    async shutdown() {
      stopping = true;
      clearTimeout(timer);
      await Promise.all(servers.map((server) => server.shutdown().catch(() => {})));
    },
  };
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0];
}
