/**
 * Sends the server's own envelopes to the ingest over one keep-alive HTTP/1.1 connection,
 * pipelined: the envelopes queued while a batch is on the wire go out together, in one write,
 * and their answers are read back in order.
 *
 * A traced request ends in one envelope. Sent one request at a time, each costs a socket write
 * and a read, and on a busy server those were about half of what tracing a request cost. Under
 * load batches grow by themselves (everything that queued during the last round trip); when
 * the server is quiet, an envelope goes out alone at once. There is no timer and no delay.
 *
 * An envelope is sent again only when no answer came for it: at once when the ingest had said
 * `Connection: close` on an earlier answer (it then reads nothing more, RFC 9112 9.6), and at
 * most once more when the connection closed, broke or timed out (the ingest may or may not have
 * taken it). The server's own envelopes carry an event id each (errors, transactions), and
 * Sentry keeps one event per id, so a second copy is dropped there. An ingest that stops
 * answering partway through a batch does not take pipelining: the caller is told
 * ({@link NotPipelined}) and sends one request at a time from then on. The tunnel never
 * pipelines: browsers' envelopes are forwarded one per request, as they came
 * (tunnel/ingest_client.ts).
 */
import { requestHead, writeAll } from "./http1_request.ts";
import { type ParsedResponse, ResponseParser } from "./http1_response.ts";
import { connect } from "./connect.ts";

type Bytes = Uint8Array<ArrayBuffer>;

/** Limits and policy of an {@link EnvelopePipeline}; tests make the limits small. */
export interface EnvelopePipelineOptions {
  /** Envelopes per batch (the SDK queues at most 64 anyway). */
  readonly maxBatch?: number;
  /**
   * How long an envelope that finds the connection idle waits for others to share its write
   * (0: it goes at once). A full batch never waits.
   */
  readonly lingerMs?: number;
  /** A batch not fully answered within this many milliseconds is failed or resent. */
  readonly timeoutMs?: number;
  /**
   * Send an envelope once more when its connection broke before it was answered (true for the
   * server's own envelopes, which Sentry keeps once per event id). False fails it instead, as
   * the tunnel must: a browser's envelope may carry items without an id (sessions).
   */
  readonly resend?: boolean;
  /** A response body larger than this is cut, and its connection dropped. */
  readonly maxResponseBytes?: number;
  /** Extra trusted CA certificates (PEM) for https ingests: tests with their own CA. */
  readonly caCerts?: readonly string[];
}

/** What the pipeline has done, for tests and the bench. */
export interface PipelineStats {
  /** Connections opened. */
  opened: number;
  /** Writes of one or more envelopes. */
  batches: number;
  /** Envelopes sent again after their connection failed them. */
  retried: number;
}

interface Pending {
  readonly bytes: Bytes;
  readonly resolve: (response: ParsedResponse) => void;
  readonly reject: (error: unknown) => void;
  attempts: number;
  /** The caller stopped waiting (its signal aborted); an answer is read and dropped. */
  gone: boolean;
}

const MAX_HEAD_BYTES = 16 * 1024;
const READ_BYTES = 16 * 1024;
// Reused only well within the idle timeouts ingests commonly keep (nginx 75 s, Node 5 s).
const MAX_IDLE_MS = 4_000;
const encoder = new TextEncoder();

/** A pipelined sender of envelopes to one ingest URL. */
export class EnvelopePipeline {
  readonly stats: PipelineStats = { opened: 0, batches: 0, retried: 0 };
  /** False once the ingest failed a pipelined batch partway: send one request at a time then. */
  pipelining = true;
  readonly #target: { origin: string; tls: boolean; hostname: string; port: number };
  readonly #headStart: string;
  readonly #queue: Pending[] = [];
  #busy = false;
  #conn: Deno.Conn | undefined;
  #lastUsed = 0;
  /** The read kept pending on the idle connection: it sees the ingest close it. */
  #idleRead: Promise<number | null> | undefined;
  readonly #maxBatch: number;
  readonly #lingerMs: number;
  #lingering: ReturnType<typeof setTimeout> | undefined;
  readonly #timeoutMs: number;
  readonly #resend: boolean;
  readonly #maxResponseBytes: number;
  readonly #caCerts: readonly string[] | undefined;
  readonly #buffer = new Uint8Array(READ_BYTES);

  constructor(url: string, options: EnvelopePipelineOptions = {}) {
    const parsed = new URL(url);
    const tls = parsed.protocol === "https:";
    if (!tls && parsed.protocol !== "http:") throw new TypeError(`not an http(s) URL: ${url}`);
    this.#target = {
      origin: parsed.origin,
      tls,
      hostname: parsed.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: Number(parsed.port || (tls ? 443 : 80)),
    };
    this.#headStart =
      `POST ${parsed.pathname}${parsed.search} HTTP/1.1\r\nhost: ${parsed.host}\r\n`;
    this.#maxBatch = options.maxBatch ?? 64;
    this.#lingerMs = options.lingerMs ?? 0;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#resend = options.resend ?? true;
    this.#maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
    this.#caCerts = options.caCerts;
  }

  /**
   * Queue one envelope; resolves with the ingest's answer. Rejects with a TypeError when the
   * ingest could not be reached or did not answer, with {@link NotPipelined} when it turned
   * out not to take pipelining, and with the signal's reason when `signal` aborts first.
   *
   * @example
   * const answer = await pipeline.send(envelopeBytes, { "content-type": "application/x-sentry-envelope" });
   */
  send(
    body: Bytes,
    headers: Readonly<Record<string, string>>,
    signal?: AbortSignal,
  ): Promise<ParsedResponse> {
    const head = requestHead(this.#headStart, { method: "POST", redirect: "manual", headers })!;
    const headBytes = encoder.encode(`${head}content-length: ${body.byteLength}\r\n\r\n`);
    const bytes = new Uint8Array(headBytes.byteLength + body.byteLength);
    bytes.set(headBytes);
    bytes.set(body, headBytes.byteLength);
    const { promise, resolve, reject } = Promise.withResolvers<ParsedResponse>();
    const pending: Pending = { bytes, resolve, reject, attempts: 0, gone: false };
    if (signal !== undefined) {
      if (signal.aborted) return Promise.reject(signal.reason);
      const onAbort = () => {
        pending.gone = true;
        const queued = this.#queue.indexOf(pending);
        if (queued >= 0) this.#queue.splice(queued, 1);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      promise.then(
        () => signal.removeEventListener("abort", onAbort),
        () => signal.removeEventListener("abort", onAbort),
      );
    }
    this.#queue.push(pending);
    if (this.#lingerMs === 0 || this.#queue.length >= this.#maxBatch) this.#pump();
    else {
      this.#lingering ??= setTimeout(() => {
        this.#lingering = undefined;
        this.#pump();
      }, this.#lingerMs);
    }
    return promise;
  }

  /** Close the idle connection (a batch in flight finishes on its own). */
  close(): void {
    if (this.#lingering !== undefined) this.#pump();
    else if (!this.#busy) this.#drop();
  }

  async #pump(): Promise<void> {
    if (this.#busy) return;
    clearTimeout(this.#lingering);
    this.#lingering = undefined;
    this.#busy = true;
    try {
      while (this.#queue.length > 0) {
        await this.#sendBatch(this.#queue.splice(0, this.#maxBatch));
      }
    } finally {
      this.#busy = false;
    }
  }

  // Settles or requeues every envelope of the batch; never throws.
  async #sendBatch(batch: Pending[]): Promise<void> {
    if (this.#conn !== undefined && performance.now() - this.#lastUsed > MAX_IDLE_MS) this.#drop();
    if (this.#conn === undefined) {
      try {
        this.#conn = await connect(this.#target, null, this.#caCerts);
        this.stats.opened++;
      } catch (error) {
        const failure = new TypeError(`could not connect to ${this.#target.origin}`, {
          cause: error,
        });
        for (const pending of batch) pending.reject(failure);
        return;
      }
    }
    const conn = this.#conn;
    conn.ref();
    this.stats.batches++;
    const timer = setTimeout(() => this.#drop(), this.#timeoutMs);
    let answered = 0;
    // The ingest said `Connection: close`: it reads nothing more from this connection.
    let closing = false;
    // An answer over the size cap: the connection cannot be read any further.
    let cut = false;
    try {
      await writeAll(conn, batch.length === 1 ? batch[0].bytes : concat(batch));
      let parser = new ResponseParser(MAX_HEAD_BYTES, this.#maxResponseBytes);
      reading: while (answered < batch.length) {
        const read = this.#idleRead ?? conn.read(this.#buffer);
        this.#idleRead = undefined;
        const n = await read;
        let chunk = n === null ? null : this.#buffer.subarray(0, n);
        let step = chunk === null ? parser.end() : parser.push(chunk);
        // One read can end one answer and carry the next ones.
        for (;;) {
          if (step.kind === "more") break;
          if (step.kind === "error") break reading;
          batch[answered++].resolve(step.response);
          if (step.kind === "too-large") {
            cut = true;
            break reading;
          }
          closing = !step.response.keepAlive;
          if (closing || chunk === null) break reading;
          if (answered === batch.length) break;
          chunk = chunk.subarray(step.used);
          parser = new ResponseParser(MAX_HEAD_BYTES, this.#maxResponseBytes);
          if (chunk.byteLength === 0) break;
          step = parser.push(chunk);
        }
        if (chunk === null) break;
      }
    } catch {
      // The connection broke, or the timer dropped it: what is unanswered is settled below.
    } finally {
      clearTimeout(timer);
    }
    if (answered === batch.length && !closing && this.#conn === conn) {
      this.#lastUsed = performance.now();
      this.#watchIdle(conn);
      return;
    }
    if (this.#conn === conn) this.#drop();
    this.#settleUnanswered(batch.slice(answered), answered > 0, closing && !cut);
  }

  #settleUnanswered(unanswered: Pending[], someAnswered: boolean, closing: boolean): void {
    const waiting = unanswered.filter((pending) => !pending.gone);
    if (closing) {
      // Provably never read (RFC 9112, 9.6): sent again as if for the first time.
      this.#queue.unshift(...waiting);
      this.stats.retried += waiting.length;
    } else if (someAnswered) {
      // Answers stopped partway without a word: an ingest (or a proxy before it) that does not
      // take pipelined requests. The rest, and everything queued, are handed back.
      this.pipelining = false;
      for (const pending of [...waiting, ...this.#queue.splice(0)]) {
        pending.reject(new NotPipelined());
      }
    } else {
      const again: Pending[] = [];
      for (const pending of waiting) {
        if (this.#resend && ++pending.attempts < 2) again.push(pending);
        else pending.reject(new TypeError("the ingest closed the connection before answering"));
      }
      this.#queue.unshift(...again);
      this.stats.retried += again.length;
    }
  }

  // Keep a read pending while idle: any byte or EOF means the connection can carry nothing
  // more, and it must not hold the process open.
  #watchIdle(conn: Deno.Conn): void {
    conn.unref();
    const read = this.#idleRead = conn.read(this.#buffer);
    read.then(
      () => this.#idleRead === read && this.#conn === conn && this.#drop(),
      () => this.#conn === conn && this.#drop(),
    );
  }

  #drop(): void {
    const conn = this.#conn;
    this.#conn = undefined;
    this.#idleRead = undefined;
    try {
      conn?.close();
    } catch {
      // Already closed.
    }
  }
}

/**
 * The envelope was not answered because the ingest does not take pipelined requests; it may
 * or may not have been read. The caller sends it again on its own.
 */
export class NotPipelined extends TypeError {
  constructor() {
    super("the ingest does not answer pipelined requests");
  }
}

function concat(batch: readonly Pending[]): Bytes {
  let length = 0;
  for (const pending of batch) length += pending.bytes.byteLength;
  const out = new Uint8Array(length);
  let at = 0;
  for (const pending of batch) {
    out.set(pending.bytes, at);
    at += pending.bytes.byteLength;
  }
  return out;
}
