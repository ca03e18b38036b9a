/**
 * A real fake Sentry ingest on 127.0.0.1 (port 0): it records exactly what reaches it (path,
 * headers, raw body bytes and their SHA-256) and answers however a test tells it to.
 *
 * @example
 * await using ingest = startFakeIngest();
 * const dsn = ingest.dsn("public", "1"); // http://public@127.0.0.1:PORT/1
 * // ... post through the tunnel ...
 * ingest.requests[0].sha256;
 */
import { type Envelope, parseEnvelope } from "@sentry/core";

/** One request whose body arrived complete. */
export interface ReceivedRequest {
  readonly method: string;
  /** Path and query, e.g. `/api/1/envelope/`. */
  readonly path: string;
  readonly headers: Headers;
  /** The body exactly as it came off the wire (still compressed if it was sent compressed). */
  readonly body: Uint8Array<ArrayBuffer>;
  /** Lower-case hex SHA-256 of `body`. */
  readonly sha256: string;
}

/** How the ingest answers; every field is optional. */
export interface IngestReply {
  /** Defaults to 200. */
  readonly status?: number;
  readonly headers?: HeadersInit;
  /** Defaults to `{"id":"<32 hex>"}` with `Content-Type: application/json`. */
  readonly body?: string;
  /**
   * Answer only once this settles (a promise the test resolves when it has seen what it needs
   * while the answer is held), or the ingest closes.
   */
  readonly hold?: Promise<unknown>;
  /** Answer 302 with this Location instead. */
  readonly redirectTo?: string;
  /** Answer at once without reading the body (as an ingest refusing a huge upload does). */
  readonly skipBody?: boolean;
}

/** A running fake ingest. */
export interface FakeIngest extends AsyncDisposable {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** A DSN pointing at this ingest: `http://{publicKey}@127.0.0.1:PORT{pathPrefix}/{projectId}`. */
  dsn(publicKey?: string, projectId?: string, pathPrefix?: string): string;
  /** Requests whose bodies arrived complete, in arrival order. */
  readonly requests: readonly ReceivedRequest[];
  /** How many requests reached the ingest at all (headers seen), complete or not. */
  readonly started: number;
  /** How many request bodies broke off before their end (the sender aborted), or were left
   * unread because of `skipBody`. */
  readonly incomplete: number;
  /** Change how later requests are answered (`skipBody` only works with a fixed reply). */
  reply(reply: IngestReply | ((request: ReceivedRequest) => IngestReply)): void;
  /** Every complete request body parsed as an envelope (gzip/deflate bodies decoded first). */
  envelopes(): Promise<Envelope[]>;
  /**
   * Resolve once n requests have `"started"` (headers seen), are `"complete"`, or are
   * `"settled"` (complete or incomplete); rejects after `timeoutMs` (default 10 s).
   */
  waitFor(n: number, what?: "started" | "complete" | "settled", timeoutMs?: number): Promise<void>;
  /** Stop listening, send any held answers and wait until the server is closed. */
  close(): Promise<void>;
}

/** Start a fake ingest on 127.0.0.1 with a free port, or on `port` (an outage that ends). */
export function startFakeIngest(initial: IngestReply = {}, port = 0): FakeIngest {
  const requests: ReceivedRequest[] = [];
  const counts = { started: 0, incomplete: 0 };
  const waiters = new Set<() => void>();
  const closing = new AbortController();
  let answer: IngestReply | ((request: ReceivedRequest) => IngestReply) = initial;

  const notify = () => waiters.forEach((check) => check());

  const server = Deno.serve(
    { hostname: "127.0.0.1", port, onListen: () => {} },
    async (req) => {
      counts.started++;
      notify();
      const early = typeof answer === "function" ? undefined : answer;
      if (early?.skipBody) {
        await req.body?.cancel();
        counts.incomplete++;
        notify();
        return replyResponse(early);
      }
      let body: Uint8Array<ArrayBuffer>;
      try {
        body = new Uint8Array(await req.arrayBuffer());
      } catch {
        counts.incomplete++;
        notify();
        return new Response(null, { status: 400 });
      }
      const url = new URL(req.url);
      const received: ReceivedRequest = {
        method: req.method,
        path: url.pathname + url.search,
        headers: req.headers,
        body,
        sha256: await sha256Hex(body),
      };
      requests.push(received);
      notify();
      const reply = typeof answer === "function" ? answer(received) : answer;
      if (reply.hold !== undefined) await held(reply.hold, closing.signal);
      return replyResponse(reply);
    },
  );
  const url = `http://127.0.0.1:${server.addr.port}`;

  return {
    url,
    port: server.addr.port,
    dsn: (publicKey = "public", projectId = "1", pathPrefix = "") =>
      `http://${publicKey}@127.0.0.1:${server.addr.port}${pathPrefix}/${projectId}`,
    requests,
    get started() {
      return counts.started;
    },
    get incomplete() {
      return counts.incomplete;
    },
    reply(next) {
      answer = next;
    },
    envelopes: () => Promise.all(requests.map(decodeEnvelope)),
    waitFor(n, what = "started", timeoutMs = 10_000) {
      const count = () =>
        what === "started"
          ? counts.started
          : what === "complete"
          ? requests.length
          : requests.length + counts.incomplete;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake ingest: ${count()} of ${n} requests ${what} in ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (count() < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      closing.abort();
      await server.shutdown();
    },
    [Symbol.asyncDispose]() {
      return this.close();
    },
  };
}

function replyResponse(reply: IngestReply): Response {
  if (reply.redirectTo !== undefined) {
    return new Response(null, { status: 302, headers: { location: reply.redirectTo } });
  }
  const headers = new Headers(reply.headers);
  if (reply.body === undefined && !headers.has("content-type")) {
    headers.set("content-type", "application/json");
  }
  const status = reply.status ?? 200;
  const nullBody = status === 204 || status === 205 || status === 304;
  const body = reply.body ?? JSON.stringify({ id: crypto.randomUUID().replaceAll("-", "") });
  return new Response(nullBody ? null : body, { status, headers });
}

/** The envelope a request carried, decompressed (gzip, deflate) and parsed; throws on junk. */
export async function decodeEnvelope(request: ReceivedRequest): Promise<Envelope> {
  const encoding = request.headers.get("content-encoding")?.trim().toLowerCase();
  const format: CompressionFormat | undefined = encoding === "gzip" || encoding === "x-gzip"
    ? "gzip"
    : encoding === "deflate"
    ? "deflate"
    : undefined;
  if (format === undefined) return parseEnvelope(request.body);
  const decoded = new Blob([request.body]).stream().pipeThrough(new DecompressionStream(format));
  return parseEnvelope(new Uint8Array(await new Response(decoded).arrayBuffer()));
}

/** Lower-case hex SHA-256, as in {@link ReceivedRequest.sha256}. */
export async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return digest.toHex();
}

// Resolves when `hold` settles or `signal` aborts (the ingest closes), so a held answer never
// outlives the test that asked for it. Not tied to `req.signal`: in Deno.serve's legacy mode that
// also fires after every successful response, with a warning.
function held(hold: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  const closed = new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
  return Promise.race([hold.then(() => {}, () => {}), closed]);
}
