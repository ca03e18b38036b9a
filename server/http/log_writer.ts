/**
 * Writes the log's lines to stdout in batches: within 50 ms of the first, or at once when 256
 * wait. Request records are queued as they are and formatted with their batch, in one loop:
 * formatted between requests, a line cost the server about 7 µs more (interleaved runs of
 * `GET /`, 12 rounds), as that code ran cold every time.
 *
 * The writes are asynchronous, so a stdout that does not keep up (a log shipper that stalls, a
 * full pipe) never stops the server, as a synchronous write did (it stopped requests, timers and
 * signals for as long as the reader stalled). At most 1 MiB waits to be written (or one batch
 * larger than that); batches beyond it, and batches a write fails on, are dropped, counted, and
 * said to be missing in the next line written, or, at shutdown, on stderr.
 */
import { BatchQueue } from "../batch_queue.ts";
import { settlesWithin } from "../settles_within.ts";
import { clockOrigin } from "./log_clock.ts";
import { formatRecord, type LogFormat, logTime, type RequestRecord } from "./request_log.ts";

/** Bytes handed to stdout and not written yet, beyond which batches are dropped. */
const MAX_PENDING_BYTES = 1024 * 1024;

/** What a {@link LineWriter} takes: a line, or a request's record to format with its batch. */
export type LogEntry = string | RequestRecord;

/** Where a {@link LineWriter} writes, how soon, and in which format it writes records. */
export interface LineWriterOptions {
  /**
   * Takes each batch's bytes; stdout by default. A sink that fails after writing part of them
   * rejects with a {@link PartialWrite}.
   */
  readonly sink?: (bytes: Uint8Array) => Promise<unknown>;
  /** How long the first line of a batch may wait for others (50 ms by default). */
  readonly delayMs?: number;
  /** The format records are written in (JSON by default). */
  readonly format?: LogFormat;
  /** Measures the time origin for a batch's records (log_clock.ts by default). */
  readonly timeOrigin?: () => number;
  /** Bytes that may wait to be written (1 MiB by default; one batch may be more on its own). */
  readonly maxPendingBytes?: number;
}

/** A write that failed after some of its bytes were written. */
export class PartialWrite extends Error {
  readonly written: number;
  constructor(written: number, options?: ErrorOptions) {
    super(`the write failed after ${written} bytes`, options);
    this.written = written;
  }
}

/**
 * Collects lines and request records and writes them in batches, in order, one write after the
 * other.
 *
 * @example
 * const log = new LineWriter({ format: "text" });
 * log.write("server: started");
 * await log.flush(1000);
 */
export class LineWriter {
  readonly #entries: BatchQueue<LogEntry>;
  #writing: Promise<void> = Promise.resolve();
  #pendingBytes = 0;
  #pendingLines = 0;
  // Lines dropped and not yet said to be; and whether a failed write left half a line behind.
  #dropped = 0;
  #torn = false;

  constructor(options: LineWriterOptions = {}) {
    const { sink = (b) => writeAll(Deno.stdout, b), delayMs = 50, format = "json" } = options;
    const timeOrigin = options.timeOrigin ?? clockOrigin;
    const maxPending = options.maxPendingBytes ?? MAX_PENDING_BYTES;
    this.#entries = new BatchQueue((entries) => {
      if (this.#pendingBytes >= maxPending) {
        this.#dropped += entries.length;
        return;
      }
      const origin = timeOrigin();
      let text = "";
      for (let i = 0; i < entries.length; i++) text += lineOf(entries[i], format, origin);
      const bytes = new TextEncoder().encode(this.#lead(format, origin) + text);
      if (this.#pendingBytes > 0 && this.#pendingBytes + bytes.length > maxPending) {
        this.#dropped += entries.length;
        return;
      }
      // The batch's own lines and those its first line says were dropped: unwritten until the
      // write succeeds, and dropped again if it fails.
      const lines = entries.length + this.#dropped;
      const wasTorn = this.#torn;
      this.#dropped = 0;
      this.#torn = false;
      this.#pendingBytes += bytes.length;
      this.#pendingLines += lines;
      const settled = () => {
        this.#pendingBytes -= bytes.length;
        this.#pendingLines -= lines;
      };
      const failed = (error: unknown) => {
        settled();
        this.#dropped += lines;
        // Nothing written leaves a line cut short by an earlier failure as it was.
        const partly = error instanceof PartialWrite && error.written > 0;
        this.#torn = partly || wasTorn;
      };
      this.#writing = this.#writing.then(() => sink(bytes)).then(settled, failed);
    }, { waitMs: delayMs, maxBatch: 256 });
  }

  /** Queue a line or a record; it is written within the delay, or sooner when many wait. */
  write(entry: LogEntry): void {
    this.#entries.push(entry);
  }

  /**
   * Write everything queued. Resolves true once all of it has been written and no line is
   * missing unsaid; false when some are ({@link unwritten}), or when `timeoutMs` (if given)
   * passes first: a stdout that does not keep up must not hold up shutdown.
   */
  async flush(timeoutMs?: number): Promise<boolean> {
    this.#entries.drain();
    const done = timeoutMs === undefined
      ? await this.#writing.then(() => true)
      : await settlesWithin(this.#writing, timeoutMs);
    return done && this.unwritten === 0;
  }

  /** Lines dropped and not yet said to be, and lines still waiting to be written. */
  get unwritten(): number {
    return this.#dropped + this.#pendingLines;
  }

  // What a batch starts with: the end of a line a failed write cut short, and how many lines
  // before it were dropped.
  #lead(format: LogFormat, origin: number): string {
    const end = this.#torn ? "\n" : "";
    if (this.#dropped === 0) return end;
    return end + droppedLine(this.#dropped, format, origin + performance.now()) + "\n";
  }
}

// A record that cannot be formatted (a time that is no date) loses its line, not the batch:
// the batch is written from a timer, where a throw would end the process.
function lineOf(entry: LogEntry, format: LogFormat, timeOrigin: number): string {
  if (typeof entry === "string") return entry + "\n";
  try {
    return formatRecord(entry, format, timeOrigin) + "\n";
  } catch (error) {
    console.error("request log: a record could not be formatted:", error);
    return "";
  }
}

/** The line that says how many lines before it were dropped (when it was noticed). */
function droppedLine(count: number, format: LogFormat, nowMs: number): string {
  const time = logTime(Math.floor(nowMs));
  const reason = "stdout did not keep up, or failed";
  return format === "json"
    ? `{"time":"${time}","dropped":${count},"reason":"${reason}"}`
    : `${time} log ${count} lines dropped: ${reason}`;
}

async function writeAll(output: { write(p: Uint8Array): Promise<number> }, bytes: Uint8Array) {
  let written = 0;
  try {
    while (written < bytes.length) written += await output.write(bytes.subarray(written));
  } catch (error) {
    throw new PartialWrite(written, { cause: error });
  }
}

// Process-wide, so shutdown can flush them: one per format (a process serves one; tests more).
const stdoutWriters = new Map<LogFormat, LineWriter>();

/** The batched stdout writer for a log format, made on first use. */
export function stdoutLogWriter(format: LogFormat): LineWriter {
  let writer = stdoutWriters.get(format);
  if (writer === undefined) {
    writer = new LineWriter({ format });
    stdoutWriters.set(format, writer);
  }
  return writer;
}

/**
 * Write out every log line queued in this process (shutdown), within `timeoutMs`; say on stderr
 * how many could not be, as no later line will.
 */
export async function flushLogs(timeoutMs: number): Promise<boolean> {
  const writers = [...stdoutWriters.values()];
  const flushed = await Promise.all(writers.map((writer) => writer.flush(timeoutMs)));
  const unwritten = writers.reduce((sum, writer) => sum + writer.unwritten, 0);
  if (unwritten > 0) {
    console.error(`request log: ${unwritten} lines not written: stdout did not keep up, or failed`);
  }
  return flushed.every(Boolean);
}
