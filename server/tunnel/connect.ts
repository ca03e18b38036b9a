/**
 * Where an ingest URL points and opening a connection to it, plain or TLS, for the tunnel's
 * client and the envelope pipeline, and the limits both keep to.
 */

/** The longest answer head read from an ingest. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** The size of the buffer a connection's answers are read into. */
export const READ_BYTES = 16 * 1024;
/**
 * How long a connection may sit idle and still be reused. Ingests close idle connections after
 * some seconds (nginx 75 s, Node 5 s); one idle for less than the shortest common timeout is
 * unlikely to be closing as it is reused.
 */
export const MAX_IDLE_MS = 4_000;

/**
 * Resolves once the event loop has turned (a zero timer). The ingest's close may have reached an
 * idle connection's read in the very turn that sends on it, its handler still queued: taken over
 * then, the connection gets a request that fails after it was written, which the tunnel cannot
 * send again. After the turn the handler has run. Only for a connection idle for at least
 * {@link SETTLE_IDLE_MS} (see there). A close still on its way when the timer fires (Deno may
 * run a due timer before it polls sockets) can still meet a request: the race every keep-alive
 * client has, narrowed, not closed.
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * How long a connection must have been idle before it is reused only after a turn of the event
 * loop ({@link nextTurn}). Ingests close connections that have been idle for seconds (their
 * keep-alive timeouts); one that carried a batch moments ago is not being closed for idling. Under
 * load connections are idle for milliseconds between batches, and waiting a turn before each batch
 * held about 8 MB more memory (median RSS after `GET /` load, monitoring on, 7 runs each).
 */
export const SETTLE_IDLE_MS = 100;

/** Where an ingest listens. */
export interface Endpoint {
  readonly tls: boolean;
  readonly hostname: string;
  readonly port: number;
}

/** An ingest URL as the HTTP/1.1 clients use it. */
export interface IngestTarget extends Endpoint {
  readonly origin: string;
  /** `POST <path> HTTP/1.1` and `host:`, the part of the request head that never changes. */
  readonly headStart: string;
}

/**
 * The target of an http(s) URL without credentials, else undefined.
 *
 * @example
 * ingestTarget("https://o1.ingest.sentry.io/api/42/envelope/")?.port; // 443
 */
export function ingestTarget(url: string): IngestTarget | undefined {
  const parsed = new URL(url);
  const tls = parsed.protocol === "https:";
  if ((!tls && parsed.protocol !== "http:") || parsed.username !== "" || parsed.password !== "") {
    return undefined;
  }
  return {
    origin: parsed.origin,
    tls,
    hostname: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
    port: Number(parsed.port || (tls ? 443 : 80)),
    headStart: `POST ${parsed.pathname}${parsed.search} HTTP/1.1\r\nhost: ${parsed.host}\r\n`,
  };
}

/** Connect, giving up at once when `signal` aborts (a connection made later is closed). */
export function connect(
  target: Endpoint,
  signal: AbortSignal | null,
  caCerts: readonly string[] | undefined,
): Promise<Deno.Conn> {
  const { hostname, port } = target;
  if (!target.tls) return Deno.connect({ hostname, port, signal: signal ?? undefined });
  const connecting = Deno.connectTls({
    hostname,
    port,
    caCerts: caCerts && [...caCerts],
  });
  if (signal === null) return connecting;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    connecting.then((conn) => {
      signal.removeEventListener("abort", onAbort);
      if (signal.aborted) conn.close();
      else resolve(conn);
    }, reject);
  });
}
