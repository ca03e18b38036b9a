/** The request body: capped, stoppable, read whole when small, else streamed. A pending read is
 * never cancelled (in Deno 2.9 that leaks its op and 64 KiB buffer): stopping only stops waiting,
 * and the body is cancelled once that read ends. */
import type { Bytes } from "./envelope.ts";

/** Why a transfer was cut short; "abandoned": the exchange ended before the body did. */
export type StopCause = "timeout" | "client" | "too-large" | "abandoned";

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
  done = false;
  /** Aborted when the body is cut short (not when merely abandoned): stops the upstream request. */
  readonly upstream = new AbortController();
  readonly #reader: ReadableStreamDefaultReader<Bytes> | undefined;
  #pending: Promise<unknown> = Promise.resolve();
  #wake: ((cause: StopCause) => void) | undefined;

  constructor(
    private readonly req: Request,
    readonly declared: number | null,
    readonly maxBytes: number,
  ) {
    if (!isSmallBody(declared)) {
      this.#reader = req.body!.getReader() as ReadableStreamDefaultReader<Bytes>;
    }
  }

  /** Stop reading: a pending {@link until} or {@link next} rejects with the cause at once. */
  stop(cause: StopCause): void {
    if (this.cause !== undefined) return;
    this.cause = cause;
    this.#wake?.(cause);
    if (cause !== "abandoned") this.upstream.abort();
  }

  /** `promise`'s value, unless the body is stopped first (then rejects with the cause). */
  until<T>(promise: Promise<T>): Promise<T> {
    if (this.cause !== undefined) return Promise.reject(this.cause);
    return new Promise<T>((resolve, reject) => {
      this.#wake = reject;
      promise.then(resolve, reject);
    });
  }

  /** The next chunk, or undefined at the end; rejects with the cause once stopped. */
  async next(): Promise<Bytes | undefined> {
    if (this.cause !== undefined) throw this.cause;
    if (this.done) return undefined;
    const read = this.#reader?.read() ??
      this.req.bytes().then((value) => ({ done: false as const, value }));
    this.#pending = read.catch(() => {});
    let result: ReadableStreamReadResult<Bytes>;
    try {
      result = await this.until(read);
    } catch {
      this.stop("client"); // a body that errors is a client gone mid-upload
      throw this.cause;
    }
    const { declared } = this;
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

  /** The body upstream: `first` (read so far), then the rest as the ingest pulls it. */
  stream(first: Bytes): ReadableStream<Bytes> {
    let replay: Bytes | undefined = first;
    return new ReadableStream<Bytes>({
      pull: async (controller) => {
        const chunk = replay ?? await this.next();
        replay = undefined;
        if (chunk === undefined) controller.close();
        else controller.enqueue(chunk);
      },
      // The ingest answered before taking it all: its answer is what the client gets.
      cancel: () => this.stop("abandoned"),
    }, { highWaterMark: 0 });
  }

  /** The exchange is over: a pull still pending fails (a cut body never ends cleanly upstream). */
  release(): void {
    if (!this.done) this.stop("abandoned");
    this.#pending.then(() => this.#reader?.cancel()).catch(() => {});
  }

  #fail(cause: StopCause): never {
    this.stop(cause);
    throw cause;
  }
}

/** A semaphore for large bodies in flight (each holds read and upstream buffers): past `limit` an
 * upload waits unread in kernel socket buffers. A client (`key`) holds at most `perClient` slots,
 * so a few idle uploads cannot keep everyone's out; its others wait in its own line, and a freed
 * slot goes to the next line, in turn, whose client may take one. `release()` frees or leaves. */
export function createStreamSlots(limit: number, perClient = limit) {
  let free = limit;
  const held = new Map<string, number>();
  const lines = new Map<string, Set<() => void>>(); // per client, clients in arrival order
  const hold = (key: string, n: number) => n === 0 ? held.delete(key) : held.set(key, n);
  const leave = (key: string, grant: () => void) => {
    if (lines.get(key)?.delete(grant) && lines.get(key)!.size === 0) lines.delete(key);
  };
  return (key = "") => {
    const { promise, resolve } = Promise.withResolvers<void>();
    let holding = false;
    const grant = () => {
      holding = true;
      hold(key, (held.get(key) ?? 0) + 1);
      resolve();
    };
    if (free > 0 && (held.get(key) ?? 0) < perClient) {
      free--;
      grant();
    } else lines.set(key, (lines.get(key) ?? new Set()).add(grant));
    return {
      ready: promise,
      release() {
        if (!holding) return leave(key, grant);
        holding = false;
        hold(key, held.get(key)! - 1);
        // At most limit / perClient clients are at their share: the loop skips no more than those.
        for (const [client, line] of lines) {
          if ((held.get(client) ?? 0) >= perClient) continue;
          const [next] = line;
          leave(client, next);
          if (lines.delete(client)) lines.set(client, line); // its line goes last: round robin
          return next();
        }
        free++;
      },
    };
  };
}
