/**
 * Sends envelopes to an ingest over keep-alive HTTP/1.1 connections, pipelined: the envelopes
 * queued while a batch is on the wire go out together, in one write, and their answers are read
 * back in order. Used for the server's own envelopes and for the tunnel's envelopes read whole.
 *
 * A traced request ends in one envelope. Sent one request at a time, each costs a socket write
 * and a read, and on a busy server those were about half of what tracing a request cost. Under
 * load batches grow by themselves (everything that queued during the last round trip), and
 * envelopes sent in one turn of the event loop share a write from the start. A connection
 * carries one batch at a time; another connection opens (up to a limit) only when a batch's
 * worth queues behind busy ones, since an ingest answers pipelined requests one after another.
 *
 * An envelope is sent again only when no answer came for it: at once when the ingest had said
 * `Connection: close` on an earlier answer (it then reads nothing more, RFC 9112 9.6; the next
 * batch on a new connection then carries one envelope, so an ingest that closes after every
 * answer costs one connection per envelope, not a resend of the whole rest each time), and at
 * most once more, with `resend`, when the connection broke or timed out (the ingest may or may
 * not have taken it). The server's own envelopes carry an event id each (errors, transactions),
 * and Sentry keeps one event per id, so a second copy is dropped there; a browser's envelope may
 * carry items without one, so the tunnel does not resend. An ingest that closes cleanly partway
 * through a batch without saying so does not take pipelining: the caller is told
 * ({@link NotPipelined}, with whether the envelope was written) and sends one request at a time
 * from then on.
 */
import type { AbortSwitch } from "./abort_switch.ts";
import { requestHead, writeAll, writeHead } from "./http1_request.ts";
import { type ParsedResponse, ResponseParser } from "./http1_response.ts";
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

type Bytes = Uint8Array<ArrayBuffer>;

/** Limits and policy of an {@link EnvelopePipeline}; tests make the limits small. */
export interface EnvelopePipelineOptions {
  /** Envelopes per batch (the SDK queues at most 64 anyway). */
  readonly maxBatch?: number;
  /** Connections at most; another opens only when a full batch waits behind busy ones. */
  readonly maxConnections?: number;
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
  /**
   * The request head, framing included; written with the body into the batch's one write, one
   * byte per character (writeHead), so its length is its size on the wire.
   */
  readonly head: string;
  readonly body: Bytes;
  /** The body's length when it was sent, which its head declares: exactly this much is written. */
  readonly bodyBytes: number;
  readonly resolve: (response: ParsedResponse) => void;
  readonly reject: (error: unknown) => void;
  attempts: number;
  /** The caller stopped waiting (its switch was thrown); an answer is read and dropped. */
  gone: boolean;
}

/** One connection and the batch it carries. */
interface Lane {
  conn: Deno.Conn | undefined;
  busy: boolean;
  lastUsed: number;
  /** The read kept pending while idle: it sees the ingest close the connection. */
  idleRead: Promise<number | null> | undefined;
  readonly buffer: Uint8Array<ArrayBuffer>;
  /** The ingest closed with envelopes unanswered: the next batch carries one. */
  single: boolean;
}

/** A pipelined sender of envelopes to one ingest URL. */
export class EnvelopePipeline {
  readonly stats: PipelineStats = { opened: 0, batches: 0, retried: 0 };
  /** False once the ingest failed a pipelined batch partway: send one request at a time then. */
  pipelining = true;
  readonly #target: IngestTarget;
  readonly #queue: Pending[] = [];
  readonly #lanes: Lane[] = [];
  readonly #maxBatch: number;
  readonly #maxConnections: number;
  /** A pump of what this turn queued is due. */
  #pumpQueued = false;
  /** After close(): a connection is closed when its batch ends, never kept idle. */
  #closed = false;
  readonly #timeoutMs: number;
  readonly #resend: boolean;
  readonly #maxResponseBytes: number;
  readonly #caCerts: readonly string[] | undefined;

  constructor(url: string, options: EnvelopePipelineOptions = {}) {
    const target = ingestTarget(url);
    if (target === undefined) throw new TypeError(`not an http(s) URL without credentials: ${url}`);
    this.#target = target;
    this.#maxBatch = options.maxBatch ?? 64;
    this.#maxConnections = options.maxConnections ?? 8;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#resend = options.resend ?? true;
    this.#maxResponseBytes = options.maxResponseBytes ?? 64 * 1024;
    this.#caCerts = options.caCerts;
  }

  /**
   * Queue one envelope; resolves with the ingest's answer. Rejects with a TypeError when the
   * ingest could not be reached or did not answer, with {@link NotPipelined} when it turned
   * out not to take pipelining, and with the switch's reason when `stop` is thrown first.
   * `body` is not copied: it is read when its batch is written (and again if it is resent), so
   * leave it unchanged until the answer; exactly the length it has now is written.
   *
   * @example
   * const answer = await pipeline.send(envelopeBytes, { "content-type": "application/x-sentry-envelope" });
   */
  send(
    body: Bytes,
    headers: Readonly<Record<string, string>>,
    stop?: AbortSwitch,
  ): Promise<ParsedResponse> {
    if (!this.pipelining) return Promise.reject(new NotPipelined(false));
    const head = requestHead(this.#target.headStart, {
      method: "POST",
      redirect: "manual",
      headers,
    })!;
    const bodyBytes = body.byteLength;
    const framed = `${head}content-length: ${bodyBytes}\r\n\r\n`;
    // The envelope is not copied here: the batch it goes out in is built with one buffer for all
    // (each ArrayBuffer V8 makes costs about a microsecond, and its memory is freed late).
    const { promise, resolve, reject } = Promise.withResolvers<ParsedResponse>();
    const pending: Pending = {
      head: framed,
      body,
      bodyBytes,
      resolve,
      reject,
      attempts: 0,
      gone: false,
    };
    if (stop !== undefined) {
      if (stop.aborted) return Promise.reject(stop.reason);
      // Thrown after the answer came, this changes nothing: the envelope left every batch.
      stop.onAbort(() => {
        pending.gone = true;
        const queued = this.#queue.indexOf(pending);
        if (queued >= 0) this.#queue.splice(queued, 1);
        reject(stop.reason);
      });
    }
    this.#queue.push(pending);
    if (this.#queue.length >= this.#maxBatch) this.#pump();
    else if (!this.#pumpQueued) {
      // Envelopes sent in one turn (a batch of transactions, the envelopes of requests whose
      // bodies arrived together) share one write, with no timer.
      this.#pumpQueued = true;
      queueMicrotask(() => {
        if (this.#pumpQueued) this.#pump();
      });
    }
    return promise;
  }

  /**
   * Send what is queued and close the idle connections; a batch in flight finishes, then closes
   * its connection. Sending later still works, on connections closed after each batch.
   */
  close(): void {
    this.#closed = true;
    if (this.#pumpQueued) this.#pump();
    for (const lane of this.#lanes) if (!lane.busy) this.#drop(lane);
  }

  // Hand the queue to idle connections; a new one opens only when a batch's worth is waiting
  // behind busy ones.
  #pump(): void {
    this.#pumpQueued = false;
    while (this.#queue.length > 0) {
      const lane = this.#lanes.find((l) => !l.busy) ?? this.#newLane();
      if (lane === undefined) return;
      this.#run(lane);
    }
  }

  #newLane(): Lane | undefined {
    const waiting = this.#lanes.length === 0 || this.#queue.length >= this.#maxBatch;
    if (!waiting || this.#lanes.length >= this.#maxConnections) return undefined;
    const lane: Lane = {
      conn: undefined,
      busy: false,
      lastUsed: 0,
      idleRead: undefined,
      buffer: new Uint8Array(READ_BYTES),
      single: false,
    };
    this.#lanes.push(lane);
    return lane;
  }

  async #run(lane: Lane): Promise<void> {
    lane.busy = true;
    try {
      while (this.#queue.length > 0) {
        await this.#sendBatch(lane, this.#queue.splice(0, lane.single ? 1 : this.#maxBatch));
      }
    } finally {
      lane.busy = false;
    }
  }

  // Settles or requeues every envelope of the batch; never throws.
  async #sendBatch(lane: Lane, all: Pending[]): Promise<void> {
    // An idle connection the ingest closed meanwhile is dropped by its watch, once told.
    if (lane.idleRead !== undefined && performance.now() - lane.lastUsed >= SETTLE_IDLE_MS) {
      await nextTurn();
    }
    if (lane.conn !== undefined && performance.now() - lane.lastUsed > MAX_IDLE_MS) {
      this.#drop(lane);
    }
    if (lane.conn === undefined) {
      // Bounded like the exchange: a connect whose SYN is dropped would otherwise wait for the
      // kernel's own timeout (about 2 minutes), holding the lane and the queue behind it.
      const connecting = new AbortController();
      const giveUp = setTimeout(() => connecting.abort(), this.#timeoutMs);
      try {
        lane.conn = await connect(this.#target, connecting.signal, this.#caCerts);
        this.stats.opened++;
      } catch (error) {
        const failure = new TypeError(`could not connect to ${this.#target.origin}`, {
          cause: error,
        });
        for (const pending of all) pending.reject(failure);
        return;
      } finally {
        clearTimeout(giveUp);
      }
    }
    // Envelopes whose callers gave up before they were written are not written at all.
    const batch = all.filter((pending) => !pending.gone);
    if (batch.length === 0) {
      // A connection opened for nothing is idle from now, and watched like any idle one: the
      // ingest may close it before the next batch.
      if (this.#closed) this.#drop(lane);
      else if (lane.idleRead === undefined) {
        this.#watchIdle(lane, lane.conn);
      }
      return;
    }
    const conn = lane.conn;
    conn.ref();
    // Taken over from the idle watch, which must not close the connection under this batch.
    let read = lane.idleRead;
    lane.idleRead = undefined;
    this.stats.batches++;
    const timer = setTimeout(() => this.#drop(lane), this.#timeoutMs);
    let answered = 0;
    // The connection ends with this answer (`Connection: close`, an HTTP/1.0 answer, a body
    // ended by closing): it carries nothing more...
    let closing = false;
    // ...and the ingest said `Connection: close`: what followed was never processed.
    let neverRead = false;
    // The connection cannot carry another batch: an answer cut at the cap, bytes after the last
    // answer, a clean close partway, an error.
    let spent = false;
    // It closed cleanly partway through the batch without a word.
    let quit = false;
    try {
      await writeAll(conn, frame(batch));
      let parser = new ResponseParser(MAX_HEAD_BYTES, this.#maxResponseBytes);
      reading: while (answered < batch.length) {
        const n = await (read ?? conn.read(lane.buffer));
        read = undefined;
        let chunk = n === null ? null : lane.buffer.subarray(0, n);
        let step = chunk === null ? parser.end() : parser.push(chunk);
        // One read can end one answer and carry the next ones.
        for (;;) {
          if (step.kind === "more") break;
          if (step.kind === "error") {
            spent = true;
            quit = chunk === null && answered > 0;
            break reading;
          }
          batch[answered++].resolve(step.response);
          if (step.kind === "too-large") {
            spent = true;
            break reading;
          }
          closing = !step.response.keepAlive;
          neverRead = step.response.closes;
          if (closing || chunk === null) break reading;
          chunk = chunk.subarray(step.used);
          if (answered === batch.length) {
            spent = chunk.byteLength > 0;
            break reading;
          }
          parser = new ResponseParser(MAX_HEAD_BYTES, this.#maxResponseBytes);
          if (chunk.byteLength === 0) break;
          step = parser.push(chunk);
        }
      }
    } catch {
      // The connection broke, or the timer dropped it: what is unanswered is settled below.
      spent = true;
    } finally {
      clearTimeout(timer);
    }
    // After a close with envelopes unanswered, one envelope per connection until a connection
    // carries a batch to the end: an ingest that closes after every answer then costs one write
    // per envelope, never the whole rest again.
    lane.single = closing && (answered < batch.length || lane.single);
    if (answered === batch.length && !closing && !spent && !this.#closed && lane.conn === conn) {
      this.#watchIdle(lane, conn);
      return;
    }
    if (lane.conn === conn) this.#drop(lane);
    this.#settleUnanswered(batch.slice(answered), { neverRead: neverRead && !spent, quit });
  }

  #settleUnanswered(unanswered: Pending[], how: { neverRead: boolean; quit: boolean }): void {
    const waiting = unanswered.filter((pending) => !pending.gone);
    if (how.neverRead) {
      // Provably never read (RFC 9112, 9.6): sent again as if for the first time.
      this.#queue.unshift(...waiting);
      this.stats.retried += waiting.length;
    } else if (how.quit) {
      // Answers stopped partway, the connection closed cleanly, without a word: an ingest (or
      // a proxy before it) that does not take pipelined requests. The rest, and everything
      // queued, are handed back.
      this.pipelining = false;
      for (const pending of waiting) pending.reject(new NotPipelined(true));
      for (const pending of this.#queue.splice(0)) pending.reject(new NotPipelined(false));
    } else {
      const again: Pending[] = [];
      for (const pending of waiting) {
        if (this.#resend && ++pending.attempts < 2) again.push(pending);
        else pending.reject(new TypeError("the ingest closed the connection before answering"));
      }
      this.#queue.unshift(...again);
      this.stats.retried += again.length;
    }
    if (this.#queue.length > 0) this.#pump();
  }

  // The connection is idle from now. Keep a read pending while it is: any byte or EOF means it
  // can carry nothing more, and it must not hold the process open.
  #watchIdle(lane: Lane, conn: Deno.Conn): void {
    lane.lastUsed = performance.now();
    conn.unref();
    const read = lane.idleRead = conn.read(lane.buffer);
    read.then(
      () => lane.idleRead === read && lane.conn === conn && this.#drop(lane),
      () => lane.idleRead === read && lane.conn === conn && this.#drop(lane),
    );
  }

  #drop(lane: Lane): void {
    const conn = lane.conn;
    lane.conn = undefined;
    lane.idleRead = undefined;
    try {
      conn?.close();
    } catch {
      // Already closed.
    }
  }
}

/**
 * The envelope was not answered because the ingest does not take pipelined requests. `written`:
 * it went out, and may or may not have been read; otherwise it never left.
 */
export class NotPipelined extends TypeError {
  constructor(readonly written: boolean) {
    super("the ingest does not answer pipelined requests");
  }
}

// One buffer with every request of the batch, heads encoded straight into it.
function frame(batch: readonly Pending[]): Bytes {
  let length = 0;
  for (const pending of batch) length += pending.head.length + pending.bodyBytes;
  const out = new Uint8Array(length);
  let at = 0;
  for (const pending of batch) {
    writeHead(out, at, pending.head);
    at += pending.head.length;
    // The declared length, whatever became of the body since: a body changed after send() must
    // not desync the connection (it would carry a request of its own to the ingest).
    out.set(pending.body.subarray(0, pending.bodyBytes), at);
    at += pending.bodyBytes;
  }
  return out;
}
