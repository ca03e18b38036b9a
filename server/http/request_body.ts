/** A request body, read once within a cap: memory in proportion to the bytes read and a fair share
 * of the event loop, whatever the client's chunking. A pending read is never cancelled (in Deno
 * 2.9 that leaks its op and buffer): stopping only stops waiting, and the body is cancelled once
 * that read ends. */

import type { BodyBudget, Place } from "./body_budget.ts";

/** Body bytes as the Fetch API hands them out. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** Why a read was cut short; "abandoned": the exchange ended before the body did. */
export type StopCause = "timeout" | "busy" | "client" | "too-large" | "fragmented" | "abandoned";

/** Reads handled back to back before other connections get a turn: already buffered chunks
 * resolve as microtasks, so without a turn one body in 1-byte chunks holds the loop for seconds. */
export const READS_PER_TURN = 64;

/** Reads a body may take freely; past them its reads must average {@link MIN_AVERAGE_READ} bytes.
 * A read costs about 5 µs however small: 1-byte chunks would cost a core per 200 KB/s sent, and
 * no real client sends pieces this small (a TCP segment holds up to 1,460 bytes). */
export const FREE_READS = 64;
export const MIN_AVERAGE_READ = 256;

/** The one-line reason a body refused for its chunking is given (with a 400). */
export const FRAGMENTED_REASON =
  `request body sent in pieces too small for a real client (under ${MIN_AVERAGE_READ} bytes each)`;

// What each streamed read may fill, as Deno's own reads do.
const READ_BYTES = 64 * 1024;

// A timer, not a microtask or setImmediate: only a timer lets Deno park and poll its sockets (a
// loopback client got 17 answers in 0.4 s with setImmediate every 64 reads; with it, 3,500/s).
const nextTurn = () => new Promise((turn) => setTimeout(turn, 0));

/** A Content-Length of at most 15 digits, else null; a repeated field (`42, 42`, as Deno joins
 * it) is that number if all agree numerically, as Deno frames the body (RFC 9110 8.6). */
export function contentLength(headers: Headers): number | null {
  const value = headers.get("content-length");
  if (value === null || !/^\d{1,15}(?:[ \t]*,[ \t]*\d{1,15})*$/.test(value)) return null;
  const [first, ...rest] = value.split(",").map(Number);
  return rest.every((length) => length === first) ? first : null;
}

/** One request's body, read once, at most `maxBytes` of it. A body with a Content-Length up to
 * `wholeUpTo` is read whole by Deno (one buffer of that size); any other in pieces. It takes a
 * place in `budget`, each byte costing `cost` bytes of it (else, or once pushed out, is stopped
 * "busy"), and is stopped ("timeout") when it falls behind. */
export class RequestBody {
  cause: StopCause | undefined;
  received = 0;
  reads = 0;
  done = false;
  readonly whole: boolean;
  readonly #reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Bytes> | undefined;
  #spare: ArrayBuffer | undefined;
  #pending: Promise<unknown> = Promise.resolve();
  #wake: ((cause: StopCause) => void) | undefined;
  #place: Place | undefined;
  #waiting: number | null = null; // when the pending read began

  /** `declared`: the body's Content-Length ({@link contentLength}), null when chunked. */
  constructor(
    private readonly req: Request,
    readonly declared: number | null,
    readonly maxBytes: number,
    wholeUpTo: number,
    private readonly budget?: BodyBudget,
    client = "",
    cost = 1,
  ) {
    this.whole = declared !== null && declared <= wholeUpTo;
    this.#place = budget?.enter(client, this, cost);
    if (budget !== undefined && this.#place === undefined) this.stop("busy");
    if (this.whole || req.body === null) return;
    try {
      // Reads into the body's own buffer: Deno's default reader gives each read a new 64 KiB one.
      this.#reader = req.body.getReader({ mode: "byob" });
    } catch {
      this.#reader = req.body.getReader() as ReadableStreamDefaultReader<Bytes>; // not a byte stream
    }
  }

  /** Stop reading: a pending {@link until} or {@link next} rejects with the cause at once. */
  stop(cause: StopCause): void {
    if (this.cause !== undefined) return;
    this.cause = cause;
    this.#wake?.(cause);
  }

  /** `promise`'s value, unless the body is stopped first (then rejects with the cause). */
  until<T>(promise: Promise<T>): Promise<T> {
    if (this.cause !== undefined) return Promise.reject(this.cause);
    return new Promise<T>((resolve, reject) => {
      this.#wake = reject;
      promise.then(resolve, reject);
    });
  }

  /** The next chunk (the caller's to keep), or undefined at the end; rejects once stopped. Every
   * READS_PER_TURN reads, other connections get a turn first. */
  async next(): Promise<Bytes | undefined> {
    if (this.cause !== undefined) throw this.cause;
    if (this.done || (this.#reader === undefined && !this.whole)) return this.#end();
    if (this.reads > 0 && this.reads % READS_PER_TURN === 0) await this.until(nextTurn());
    const read = this.#read();
    this.#pending = read.catch(() => {});
    const result = await this.until(read).catch(() => {
      this.stop("client"); // a body that errors is a client gone mid-upload
      throw this.cause;
    });
    this.#waiting = null;
    const { declared } = this;
    if (result.done && declared !== null && this.received !== declared) return this.#fail("client");
    if (result.done) return this.#end();
    const chunk = result.value, received = this.received += chunk.byteLength, reads = ++this.reads;
    const place = this.#place;
    if (received > this.maxBytes) return this.#fail("too-large");
    if (place && !this.budget!.receive(place, chunk.byteLength)) return this.#fail("busy");
    if (reads > FREE_READS && received < reads * MIN_AVERAGE_READ) return this.#fail("fragmented");
    if (declared !== null && received > declared) return this.#fail("client");
    if (received === declared) this.#end();
    if (chunk.byteLength * 2 >= chunk.buffer.byteLength) return chunk;
    // A small chunk is copied, and its buffer kept for the next read: it never pins 64 KiB.
    if (this.#reader instanceof ReadableStreamBYOBReader) this.#spare = chunk.buffer;
    return chunk.slice();
  }

  /** The rest of the body in one buffer, doubled as bytes arrive, never past its Content-Length. */
  async bytes(): Promise<Bytes> {
    const whole = new ByteBuffer(this.declared ?? Infinity);
    for (let chunk = await this.next(); chunk; chunk = await this.next()) whole.append(chunk);
    return whole.bytes();
  }

  /** The exchange is over: a read still pending fails; its place and bytes go back. */
  release(): void {
    if (!this.done) this.stop("abandoned");
    if (this.#place) this.budget!.leave(this.#place);
    this.#pending.then(() => this.#reader?.cancel()).catch(() => {});
  }

  /** When the body must end (408) on the budget's clock, as long as it is read. */
  due(): number {
    if (this.done || this.cause !== undefined) return Infinity;
    // A body read whole shows no progress: it is given the time its length takes at the rate.
    const [bytes, wait] = this.whole ? [this.declared!, null] : [this.received, this.#waiting];
    return this.budget!.deadline(this.#place!, bytes, wait);
  }

  #end(): undefined {
    this.done = true;
    if (this.#place) this.#place.ended = true;
  }

  #read(): Promise<ReadableStreamReadResult<Bytes>> {
    this.#waiting ??= this.budget?.clock() ?? null;
    const reader = this.#reader;
    if (reader === undefined) return this.req.bytes().then((value) => ({ done: false, value }));
    if (!(reader instanceof ReadableStreamBYOBReader)) return reader.read();
    // A whole buffer each time: in Deno 2.9 a read offered only a few bytes may never resolve.
    const buffer = this.#spare ?? new ArrayBuffer(READ_BYTES);
    this.#spare = undefined; // the read takes it over
    return reader.read(new Uint8Array(buffer)) as Promise<ReadableStreamReadResult<Bytes>>;
  }

  #fail(cause: StopCause): never {
    this.stop(cause);
    throw cause;
  }
}

/** Bytes in one buffer that doubles as it fills (up to `max` while they fit), each piece copied. */
export class ByteBuffer {
  #buffer = new Uint8Array(0);
  length = 0;

  constructor(readonly max = Infinity) {}

  /** Append a copy of `chunk`. */
  append(chunk: Uint8Array): void {
    const needed = this.length + chunk.byteLength;
    if (needed > this.#buffer.byteLength) {
      const grown = new Uint8Array(Math.max(needed, Math.min(2 * this.length, this.max)));
      grown.set(this.bytes());
      this.#buffer = grown;
    }
    this.#buffer.set(chunk, this.length);
    this.length = needed;
  }

  /** The bytes held, as a view (valid until the next append). */
  bytes(): Bytes {
    return this.#buffer.subarray(0, this.length);
  }
}
