/**
 * The client's request body as the tunnel reads it: one transfer per request, with a size cap,
 * a way to stop that never leaves memory behind, and a deadline kept by the handler.
 *
 * The one rule that matters for memory: a read still pending on a Deno request body is never
 * cancelled. Cancelling it (reader.cancel() while the client stalls) leaves Deno's read op and
 * its 64 KiB buffer alive for good, even after the client disconnects (about 30 KB per stalled
 * upload in Deno 2.9). So stopping only stops *waiting*: the read is left to end on its own
 * (the client sends more, or goes away), and the body is cancelled after that.
 *
 * Until the header line is read, a streamed body is read into one small buffer per transfer
 * (a BYOB read) rather than a fresh 64 KiB buffer per read: a stalled or abandoned upload then
 * leaves 16 KiB of garbage, not 128 KiB, which V8 is slow to collect (it is outside its heap).
 */
import type { GrowableBytes } from "./growable_bytes.ts";

/** Body bytes as the Fetch API hands them out. */
export type Bytes = Uint8Array<ArrayBuffer>;

/** Why a transfer was cut short. */
export type StopCause = "timeout" | "client" | "too-large" | "abandoned";

/** A body reader: fills `view` when it can (byte streams), else hands out its own chunks. */
export interface BodyReader {
  read(view: Bytes): Promise<ReadableStreamReadResult<Bytes>>;
  cancel(): Promise<void>;
}

/** One request's body transfer; `cause` is set once when it is cut short. */
export interface Transfer {
  readonly reader: BodyReader;
  /** Stops the upstream request. */
  readonly upstream: AbortController;
  readonly declaredBytes: number | null;
  readonly maxBytes: number;
  received: number;
  done: boolean;
  /** An upstream request was started... */
  forwarding: boolean;
  /** ...and its answer has been read to the end. */
  answered: boolean;
  cause: StopCause | undefined;
  /** The read in progress, if any (see the module comment). */
  pending: Promise<unknown> | undefined;
  /** Ends the wait for `pending` early, with a {@link TransferStopped}. */
  wake: ((error: TransferStopped) => void) | undefined;
  /** The buffer borrowed reads fill, reused from one read to the next. */
  scratch: Bytes | undefined;
  /** The body is read whole in one go, so reads need no buffer of ours. */
  readonly whole: boolean;
}

/** Thrown by {@link readChunk} once a transfer was stopped; `Transfer.cause` says why. */
export class TransferStopped extends Error {}

// Bodies up to this size are collected whole so the ingest gets a Content-Length and one write;
// larger ones stream so memory stays flat.
const SMALL_BODY_BYTES = 64 * 1024;
// Read size while the header line is looked for (borrowed reads), and once the body streams.
const SCRATCH_BYTES = 16 * 1024;
const STREAM_READ_BYTES = 64 * 1024;

/**
 * Whether a body streams rather than being collected whole: it declared more than the small-body
 * size, or no size at all (chunked).
 */
export function isLargeBody(declaredBytes: number | null): boolean {
  return declaredBytes === null || declaredBytes > SMALL_BODY_BYTES;
}

/**
 * Whether `req` may carry body bytes. A small body with a Content-Length is judged by that
 * length alone: reading `req.body` would build a ReadableStream that `arrayBuffer()` must then
 * drain chunk by chunk, instead of Deno's one-op read of the whole body.
 */
export function hasBody(req: Request, declaredBytes: number | null): boolean {
  if (isWholeBody(declaredBytes)) return declaredBytes! > 0;
  return req.body !== null;
}

/** Start reading `req`'s body (which must not be null). */
export function startTransfer(
  req: Request,
  declaredBytes: number | null,
  maxBytes: number,
): Transfer {
  return {
    reader: bodyReader(req, declaredBytes),
    upstream: new AbortController(),
    declaredBytes,
    maxBytes,
    received: 0,
    done: false,
    forwarding: false,
    answered: false,
    cause: undefined,
    pending: undefined,
    wake: undefined,
    scratch: undefined,
    whole: isWholeBody(declaredBytes),
  };
}

/** Cut a transfer short: abort the upstream request and stop waiting for the client. */
export function stopTransfer(t: Transfer, cause: StopCause): void {
  t.cause ??= cause;
  t.upstream.abort();
  t.wake?.(new TransferStopped());
}

/**
 * Let go of the client's body once the exchange is over: cancel it now if no read is pending,
 * else as soon as that read ends (see the module comment). A no-op when all was read.
 */
export function releaseBody(t: Transfer): void {
  const cancel = () => void t.reader.cancel().catch(ignore);
  if (t.pending === undefined) cancel();
  else t.pending.then(cancel, ignore);
}

/**
 * The next body chunk, or undefined at the end; throws {@link TransferStopped} once stopped.
 * A `borrow`ed chunk may sit in the transfer's scratch buffer ({@link isBorrowed}): it is only
 * valid until the next read, so the caller copies what it keeps.
 */
export async function readChunk(t: Transfer, borrow = false): Promise<Bytes | undefined> {
  if (t.cause !== undefined) throw new TransferStopped();
  let result: ReadableStreamReadResult<Bytes>;
  if (borrow && !t.whole && t.scratch === undefined) t.scratch = new Uint8Array(SCRATCH_BYTES);
  // A whole-body reader ignores the view: no buffer for it (16 KiB per small envelope).
  const view = t.whole ? NO_VIEW : borrow ? t.scratch! : new Uint8Array(STREAM_READ_BYTES);
  const read = t.reader.read(view);
  const waited = Promise.withResolvers<ReadableStreamReadResult<Bytes>>();
  t.pending = read;
  t.wake = waited.reject;
  read.then(waited.resolve, waited.reject).finally(() => {
    if (t.pending === read) t.pending = undefined;
  });
  try {
    result = await waited.promise;
  } catch (error) {
    // A body that errors is a client that went away mid-upload.
    if (!(error instanceof TransferStopped)) stopTransfer(t, "client");
    throw new TransferStopped();
  } finally {
    t.wake = undefined;
  }
  // A BYOB read hands the buffer back as a new ArrayBuffer: that one is the scratch now.
  if (borrow && !t.whole && result.value !== undefined) {
    t.scratch = new Uint8Array(result.value.buffer);
  }
  if (t.cause !== undefined) throw new TransferStopped();
  if (result.done) {
    if (t.declaredBytes !== null && t.received !== t.declaredBytes) {
      stopTransfer(t, "client");
      throw new TransferStopped();
    }
    t.done = true;
    return undefined;
  }
  t.received += result.value.byteLength;
  if (t.received > t.maxBytes) {
    stopTransfer(t, "too-large");
    throw new TransferStopped();
  }
  if (t.declaredBytes !== null && t.received === t.declaredBytes) t.done = true;
  return result.value;
}

/** Whether `chunk` lives in the transfer's scratch buffer (and must be copied to be kept). */
export function isBorrowed(t: Transfer, chunk: Bytes): boolean {
  return chunk.buffer === t.scratch?.buffer;
}

/**
 * The body to send upstream: one array when it is small and has fully arrived (the common
 * case, sent with a Content-Length), else a stream that replays what was read and then pulls the
 * rest on demand, so a large body never sits in memory whole.
 */
export async function collectSmallBody(
  t: Transfer,
  read: GrowableBytes,
): Promise<Bytes | ReadableStream<Bytes>> {
  const expectSmall = (t.declaredBytes ?? 0) <= SMALL_BODY_BYTES;
  while (!t.done && expectSmall && t.received <= SMALL_BODY_BYTES) {
    const chunk = await readChunk(t, true);
    if (chunk !== undefined) read.append(chunk, isBorrowed(t, chunk));
  }
  if (t.done) return read.bytes();
  return replayThenStream(t, read.bytes());
}

/** Every chunk is a fresh buffer: fetch may still hold one when it pulls the next. */
function replayThenStream(t: Transfer, first: Bytes): ReadableStream<Bytes> {
  let replay: Bytes | undefined = first;
  return new ReadableStream<Bytes>({
    async pull(controller) {
      const chunk = replay ?? await readChunk(t);
      replay = undefined;
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
    cancel() {
      // The ingest stopped reading (it answered early): don't keep reading the client. The
      // upstream request stays: its answer is what the client gets.
      t.cause ??= "abandoned";
      t.wake?.(new TransferStopped());
    },
  }, { highWaterMark: 0 });
}

/**
 * The request body's reader. A small body with a Content-Length (what the browser SDK sends)
 * is read in one go: one op and no 64 KiB read buffer per request, and the cap is already
 * known to hold.
 */
function bodyReader(req: Request, declaredBytes: number | null): BodyReader {
  if (isWholeBody(declaredBytes)) {
    return wholeBodyReader(req.arrayBuffer());
  }
  const body = req.body!;
  // Deno's request bodies are byte streams; a Request built in code may carry any stream.
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    return body.getReader() as ReadableStreamDefaultReader<Bytes>;
  }
  return {
    read: (view) => byob.read(view) as Promise<ReadableStreamReadResult<Bytes>>,
    cancel: () => byob.cancel(),
  };
}

/** A reader that yields `body` as a single chunk. */
function wholeBodyReader(body: Promise<ArrayBuffer>): BodyReader {
  let taken = false;
  // Nobody may await the body (the transfer stopped first); its late failure is expected.
  body.catch(ignore);
  return {
    read() {
      if (taken) return Promise.resolve({ done: true, value: undefined });
      taken = true;
      return body.then((buffer) => ({ done: false, value: new Uint8Array(buffer) }));
    },
    cancel: () => Promise.resolve(),
  };
}

/** Whether a body is read whole, in one go (see {@link bodyReader}). */
function isWholeBody(declaredBytes: number | null): boolean {
  return declaredBytes !== null && declaredBytes <= SMALL_BODY_BYTES;
}

const NO_VIEW: Bytes = new Uint8Array(0);

function ignore(): void {}
