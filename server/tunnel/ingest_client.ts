/**
 * The tunnel's own HTTP/1.1 client for the ingest: keep-alive connections over `Deno.connect`
 * (`Deno.connectTls` for https), a request head written with its body in one write. Deno's
 * `fetch` spends ~90-100 µs of CPU per envelope; this does the same exchange for about half.
 *
 * It is `fetch`-shaped but only for what the tunnel sends (POST, a header record, a byte or
 * stream body, an abort signal); anything else goes to `fetch`. Redirects are never followed
 * (the caller sees the 3xx). Failures reject with a TypeError, aborts with the signal's reason,
 * as `fetch` does.
 *
 * An envelope is never sent twice unless the first attempt provably never left: only when the
 * very first write on a reused idle connection fails (the ingest had closed it) is the request
 * retried, once, on a new connection. An idle connection keeps a read pending, which sees the
 * ingest close it, and does not hold the process open (it is unref'd); one idle for longer than
 * ingests commonly keep them is closed instead of reused.
 */
import { headBytes, requestHead, writeAll, writeChunked, writeHead } from "./http1_request.ts";
import { ResponseParser, toResponse } from "./http1_response.ts";
import {
  connect,
  type IngestTarget,
  ingestTarget,
  MAX_HEAD_BYTES,
  MAX_IDLE_MS,
  nextTurn,
  READ_BYTES,
  SETTLE_IDLE_MS,
} from "./connect.ts";
import { EnvelopePipeline, type EnvelopePipelineOptions } from "./envelope_pipeline.ts";

type Bytes = Uint8Array<ArrayBuffer>;

/** A `fetch` for the tunnel's upstream requests, and its connection pool. */
export interface IngestClient {
  readonly fetch: typeof fetch;
  /**
   * The pipeline for envelopes sent whole to `url` (one per URL and resend policy), whose
   * connection {@link close} closes too.
   */
  pipeline(
    url: string,
    options?: Pick<EnvelopePipelineOptions, "resend" | "timeoutMs">,
  ): EnvelopePipeline;
  /** Close every idle connection (requests in flight finish on their own). */
  close(): void;
  /** Connections opened, and requests sent on a connection that had carried one before. */
  readonly stats: { opened: number; reused: number };
}

/** Limits of an {@link IngestClient}. */
export interface IngestClientOptions {
  /** Idle connections kept per origin. */
  readonly maxIdlePerOrigin?: number;
  /** A response body larger than this is cut at `maxResponseBytes + 1` bytes. */
  readonly maxResponseBytes?: number;
  /** Extra trusted CA certificates (PEM) for https ingests: tests with their own CA. */
  readonly caCerts?: readonly string[];
}

interface Connection {
  readonly conn: Deno.Conn;
  readonly target: IngestTarget;
  readonly buffer: Bytes;
  /** The read in progress; while idle it is what sees the ingest close the connection. */
  read: Promise<number | null> | undefined;
  idle: boolean;
  idleSince: number;
  closed: boolean;
}

// Targets are built from configured DSNs, so this only stops a misuse from growing forever.
const MAX_TARGETS = 64;
const clients = new WeakMap<typeof fetch, IngestClient>();

/**
 * The {@link IngestClient} whose fetch `f` is, if it is one. Its fetch writes each chunk of a
 * streamed body before it reads the next: the caller may then reuse one buffer for every
 * chunk; and it has pipelines for envelopes sent whole.
 */
export function ingestClientOf(f: typeof fetch): IngestClient | undefined {
  return clients.get(f);
}

/**
 * Build a client.
 *
 * @example
 * const client = createIngestClient();
 * const res = await client.fetch(url, { method: "POST", headers: {}, body: bytes });
 */
export function createIngestClient(options: IngestClientOptions = {}): IngestClient {
  const maxIdle = options.maxIdlePerOrigin ?? 128;
  const maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
  const idle = new Map<string, Connection[]>();
  const targets = new Map<string, IngestTarget>();
  const stats = { opened: 0, reused: 0 };
  // After close(), a request still in flight closes its connection when it ends.
  let closed = false;

  function targetFor(url: string): IngestTarget | undefined {
    let target = targets.get(url);
    if (target !== undefined) return target;
    target = ingestTarget(url);
    if (target === undefined) return undefined;
    if (targets.size >= MAX_TARGETS) targets.clear();
    targets.set(url, target);
    return target;
  }

  function takeIdle(target: IngestTarget): Connection | undefined {
    const list = idle.get(target.origin);
    const now = performance.now();
    while (list !== undefined && list.length > 0) {
      const c = list.pop()!;
      if (c.closed) continue;
      if (now - c.idleSince > MAX_IDLE_MS) {
        closeConnection(c);
        continue;
      }
      c.idle = false;
      c.conn.ref();
      return c;
    }
    return undefined;
  }

  async function open(target: IngestTarget, signal: AbortSignal | null): Promise<Connection> {
    let conn: Deno.Conn;
    try {
      conn = await connect(target, signal, options.caCerts);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw new TypeError(`could not connect to ${target.origin}`, { cause: error });
    }
    stats.opened++;
    return {
      conn,
      target,
      buffer: new Uint8Array(READ_BYTES),
      read: undefined,
      idle: false,
      idleSince: 0,
      closed: false,
    };
  }

  function release(c: Connection, reusable: boolean): void {
    if (!reusable || c.closed || closed) return closeConnection(c);
    let list = idle.get(c.target.origin);
    if (list === undefined) idle.set(c.target.origin, list = []);
    if (list.length >= maxIdle) return closeConnection(c);
    c.idle = true;
    c.idleSince = performance.now();
    list.push(c);
    c.conn.unref();
    // Any byte or EOF while idle means the connection can carry nothing more.
    const read = c.read = c.conn.read(c.buffer);
    read.then(
      () => c.idle && c.read === read && closeConnection(c),
      () => closeConnection(c),
    );
  }

  function closePipelines(): void {
    for (const pipeline of pipelines.values()) pipeline.close();
    pipelines.clear();
  }

  function closeIdle(): void {
    for (const list of idle.values()) for (const c of list) closeConnection(c);
    idle.clear();
  }

  async function send(
    target: IngestTarget,
    head: string,
    body: Bytes | ReadableStream<Bytes> | null,
    signal: AbortSignal | null,
  ): Promise<Response> {
    // An idle connection the ingest closed meanwhile leaves the pool once its read is told. The
    // first in the list has been idle longest: if it is past the threshold, any may be taken.
    const oldest = idle.get(target.origin)?.[0];
    if (oldest !== undefined && performance.now() - oldest.idleSince >= SETTLE_IDLE_MS) {
      await nextTurn();
    }
    const idleConnection = takeIdle(target);
    const reused = idleConnection !== undefined;
    let c = idleConnection ?? await open(target, signal);
    if (signal?.aborted) {
      closeConnection(c);
      throw signal.reason;
    }
    const onAbort = () => closeConnection(c);
    signal?.addEventListener("abort", onAbort);
    try {
      return await exchange(c, head, body, reused);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof NothingSent && reused) {
        // The ingest had closed the idle connection: this request never left. Once, fresh.
        signal?.removeEventListener("abort", onAbort);
        c = await open(target, signal);
        if (signal?.aborted) {
          closeConnection(c);
          throw signal.reason;
        }
        signal?.addEventListener("abort", onAbort);
        try {
          return await exchange(c, head, body, false);
        } catch (error) {
          if (signal?.aborted) throw signal.reason;
          throw asTypeError(error);
        }
      }
      throw asTypeError(error);
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  // A connection whose exchange failed partway (a write or read error) carries nothing more.
  async function exchange(
    c: Connection,
    head: string,
    body: Bytes | ReadableStream<Bytes> | null,
    reused: boolean,
  ): Promise<Response> {
    try {
      return await exchangeOn(c, head, body, reused);
    } catch (error) {
      closeConnection(c);
      throw error;
    }
  }

  async function exchangeOn(
    c: Connection,
    head: string,
    body: Bytes | ReadableStream<Bytes> | null,
    reused: boolean,
  ): Promise<Response> {
    if (reused) stats.reused++;
    const parser = new ResponseParser(MAX_HEAD_BYTES, maxResponseBytes);
    let uploaded = true;
    let upload: Promise<void> | undefined;
    if (body instanceof ReadableStream) {
      uploaded = false;
      await writeFirst(c, headBytes(`${head}transfer-encoding: chunked\r\n\r\n`));
      upload = writeChunked(c.conn, body, () => c.closed).then(() => void (uploaded = true));
      // A failed upload (the client went away) must break the connection, never end the body.
      upload.catch(() => closeConnection(c));
    } else {
      const length = body?.byteLength ?? 0;
      const framed = `${head}content-length: ${length}\r\n\r\n`;
      const whole = new Uint8Array(framed.length + length);
      writeHead(whole, 0, framed);
      if (length > 0) whole.set(body!, framed.length);
      await writeFirst(c, whole);
    }
    let step;
    for (;;) {
      const read = c.read ?? c.conn.read(c.buffer);
      c.read = undefined;
      const n = await read;
      step = n === null ? parser.end() : parser.push(c.buffer.subarray(0, n));
      if (step.kind !== "more") break;
    }
    if (step.kind === "error") {
      closeConnection(c);
      throw new TypeError(`ingest response: ${step.reason}`);
    }
    // The ingest answered before taking the whole body: this connection is done.
    if (!uploaded) closeConnection(c);
    else release(c, step.kind === "done" && step.response.reusable);
    return toResponse(step.response);
  }

  const pipelines = new Map<string, EnvelopePipeline>();
  const client: IngestClient = {
    stats,
    pipeline(url, pipelineOptions = {}) {
      const key = `${pipelineOptions.resend ?? true} ${url}`;
      let pipeline = pipelines.get(key);
      if (pipeline === undefined) {
        // Targets come from configured DSNs; this only stops a misuse from growing forever.
        if (pipelines.size >= MAX_TARGETS) closePipelines();
        pipeline = new EnvelopePipeline(url, {
          ...pipelineOptions,
          maxResponseBytes,
          caCerts: options.caCerts,
        });
        pipelines.set(key, pipeline);
        // Made after close(): it sends on connections closed after each batch, as close() leaves
        // the others, rather than keep idle ones open.
        if (closed) pipeline.close();
      }
      return pipeline;
    },
    close() {
      closed = true;
      closeIdle();
      closePipelines();
    },
    async fetch(url: URL | RequestInfo, init: RequestInit = {}) {
      const target = url instanceof Request ? undefined : targetFor(String(url));
      const head = target && requestHead(target.headStart, init);
      const body = init.body ?? null;
      if (
        head === undefined || target === undefined ||
        !(body === null || body instanceof Uint8Array || body instanceof ReadableStream)
      ) {
        return await fetch(url, init);
      }
      return await send(
        target,
        head,
        body as Bytes | ReadableStream<Bytes> | null,
        init.signal ?? null,
      );
    },
  };
  clients.set(client.fetch, client);
  return client;
}

/** Thrown when the first write of a request failed: not one byte of it was accepted. */
class NothingSent extends Error {}

async function writeFirst(c: Connection, bytes: Uint8Array): Promise<void> {
  let written: number;
  try {
    written = await c.conn.write(bytes);
  } catch (error) {
    closeConnection(c);
    throw new NothingSent("write failed", { cause: error });
  }
  await writeAll(c.conn, bytes.subarray(written));
}

function closeConnection(c: Connection): void {
  if (c.closed) return;
  c.closed = true;
  c.idle = false;
  try {
    c.conn.close();
  } catch {
    // Already closed by the runtime.
  }
}

function asTypeError(error: unknown): unknown {
  if (error instanceof TypeError) return error;
  if (error instanceof Error && !isIoError(error)) return error;
  return new TypeError("ingest connection failed", { cause: error });
}

// Every error Deno's sockets and TLS raise (reset, broken pipe, a record TLS cannot decrypt, a
// timeout, ...) is the network's or the ingest's doing: a 502. A missing permission is the
// operator's, and anything else a bug: those stay as they are.
const IO_ERRORS = Object.values(Deno.errors).filter((type) =>
  type !== Deno.errors.PermissionDenied && type !== Deno.errors.NotCapable
);

function isIoError(error: Error): boolean {
  return error instanceof NothingSent || IO_ERRORS.some((type) => error instanceof type);
}
