/**
 * The client's request body as the tunnel reads it: chunk by chunk, counted against the cap,
 * with a way to stop waiting. A small body with a Content-Length is read whole in one op
 * (`req.bytes()`); any other body is read as far as its header line and then streamed upstream
 * as it arrives, never held whole.
 *
 * A read still pending on a Deno request body is never cancelled: cancelling it while the client
 * stalls leaves Deno's read op and its 64 KiB buffer alive for good, even after the client
 * disconnects (Deno 2.9). Stopping only stops waiting; the body is cancelled once that read ends.
 */

/** Body bytes as the Fetch API hands them out. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** Why a transfer was cut short; "abandoned": the exchange ended before the body did. */
export type StopCause = "timeout" | "client" | "too-large" | "abandoned";

/** Thrown by {@link RequestBody.next} once the body was stopped; `cause` says why. */
export class BodyStopped extends Error {}

/** Bodies up to this size with a Content-Length are read whole and sent with a Content-Length. */
export const SMALL_BODY_BYTES = 64 * 1024;

/** Whether a body with this Content-Length (null: chunked) is read whole. */
export function isSmallBody(declared: number | null): declared is number {
  return declared !== null && declared <= SMALL_BODY_BYTES;
}

/** One request's body, read once, at most `maxBytes` of it. */
export class RequestBody {
  cause: StopCause | undefined;
  received = 0;
  /** Every byte was read. */
  done = false;
  readonly #read: () => Promise<ReadableStreamReadResult<Bytes>>;
  readonly #cancel: () => Promise<void>;
  /** Settles once the last read started has ended, either way. */
  #settled: Promise<void> = Promise.resolve();
  #wake: (() => void) | undefined;

  /** `onStop` runs when the body is cut short (not when merely abandoned). */
  constructor(
    req: Request,
    readonly declared: number | null,
    readonly maxBytes: number,
    private readonly onStop: () => void = ignore,
  ) {
    if (isSmallBody(declared)) {
      let whole: Promise<Bytes> | undefined;
      this.#read = () => {
        if (whole) return Promise.resolve({ done: true, value: undefined });
        whole = req.bytes();
        return whole.then((value) => ({ done: false, value }));
      };
      this.#cancel = () => Promise.resolve();
    } else {
      const reader = req.body!.getReader();
      this.#read = () => reader.read() as Promise<ReadableStreamReadResult<Bytes>>;
      this.#cancel = () => reader.cancel();
    }
  }

  /** Stop reading: a pending {@link next} throws {@link BodyStopped} at once. */
  stop(cause: StopCause): void {
    if (this.cause !== undefined) return;
    this.cause = cause;
    this.#wake?.();
    if (cause !== "abandoned") this.onStop();
  }

  /** `promise`'s value, unless the body is stopped first: then {@link BodyStopped}. */
  async until<T>(promise: Promise<T>): Promise<T> {
    if (this.cause !== undefined) throw new BodyStopped();
    const stopped = new Promise<never>((_, reject) => {
      this.#wake = () => reject(new BodyStopped());
    });
    try {
      return await Promise.race([promise, stopped]);
    } finally {
      this.#wake = undefined;
    }
  }

  /** The next chunk, or undefined at the end; throws {@link BodyStopped} once stopped. */
  async next(): Promise<Bytes | undefined> {
    if (this.cause !== undefined) throw new BodyStopped();
    const read = this.#read();
    this.#settled = read.then(ignore, ignore);
    let result: ReadableStreamReadResult<Bytes>;
    try {
      result = await this.until(read);
    } catch (error) {
      // A body that errors is a client that went away mid-upload.
      if (!(error instanceof BodyStopped)) this.stop("client");
      throw new BodyStopped();
    }
    if (this.cause !== undefined) throw new BodyStopped();
    const declared = this.declared;
    if (result.done) {
      if (declared !== null && this.received !== declared) return this.#fail("client");
      this.done = true;
      return undefined;
    }
    this.received += result.value.byteLength;
    if (this.received > this.maxBytes) return this.#fail("too-large");
    if (declared !== null && this.received >= declared) {
      if (this.received > declared) return this.#fail("client");
      this.done = true;
    }
    return result.value;
  }

  /**
   * The body to send upstream: `first` (what was read so far), then the rest as the ingest
   * pulls it. A stopped body errors the stream, which fails the upstream request.
   */
  stream(first: Bytes): ReadableStream<Bytes> {
    let replay: Bytes | undefined = first;
    return new ReadableStream<Bytes>({
      pull: async (controller) => {
        const chunk = replay ?? await this.next();
        replay = undefined;
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
      // The ingest stopped reading (it answered early): stop reading the client. Its answer is
      // what the client gets.
      cancel: () => this.stop("abandoned"),
    }, { highWaterMark: 0 });
  }

  /** Let go of the body once the exchange is over: cancelled after any read still pending. */
  release(): void {
    if (!this.done) this.stop("abandoned");
    this.#settled.then(() => this.#cancel()).catch(ignore);
  }

  #fail(cause: StopCause): never {
    this.stop(cause);
    throw new BodyStopped();
  }
}

/**
 * Bytes read so far, in one buffer that doubles as it fills: each chunk Deno hands out is a view
 * on its own 64 KiB buffer, so a body sent in 1-byte chunks must not keep its chunks.
 */
export class ReadBytes {
  #buffer: Bytes = new Uint8Array(0);
  length = 0;

  /** Append a copy of `chunk` (the first one is kept as is when it fills its own buffer). */
  append(chunk: Bytes): void {
    if (this.length === 0 && chunk.byteLength === chunk.buffer.byteLength) {
      this.#buffer = chunk;
      this.length = chunk.byteLength;
      return;
    }
    const needed = this.length + chunk.byteLength;
    if (needed > this.#buffer.byteLength) {
      const grown = new Uint8Array(Math.max(needed, 2 * this.length));
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

function ignore(): void {}
