/**
 * Writes the log's lines to stdout in batches: within 50 ms of the first, or at once when 256
 * wait. Request records are queued as they are and formatted with their batch, in one loop:
 * formatted between requests, a line cost the server about 7 µs more (interleaved runs of
 * `GET /`, 12 rounds), as that code ran cold every time.
 *
 * The writes are asynchronous, so a stdout that does not keep up (a log shipper that stalls, a
 * full pipe) never stops the server: at most {@link MAX_PENDING_BYTES} wait to be written, and
 * batches beyond that are dropped, counted, and said to be missing in the next line written.
 */
import { BatchQueue } from "../batch_queue.ts";
import { settlesWithin } from "../settles_within.ts";
import {
  clockOrigin,
  formatRecord,
  type LogFormat,
  logTime,
  type RequestRecord,
} from "./request_log.ts";

/** Bytes handed to stdout and not written yet, beyond which batches are dropped. */
export const MAX_PENDING_BYTES = 1024 * 1024;

/** What a {@link LineWriter} takes: a line, or a request's record to format with its batch. */
export type LogEntry = string | RequestRecord;

/** Where a {@link LineWriter} writes, how soon, and in which format it writes records. */
export interface LineWriterOptions {
  /** Takes each batch's bytes; stdout by default. */
  readonly sink?: (bytes: Uint8Array) => Promise<unknown>;
  /** How long the first line of a batch may wait for others (50 ms by default). */
  readonly delayMs?: number;
  /** The format records are written in (JSON by default). */
  readonly format?: LogFormat;
  /** Measures the time origin for a batch's records ({@link clockOrigin} by default). */
  readonly timeOrigin?: () => number;
  /** Bytes that may wait to be written ({@link MAX_PENDING_BYTES} by default). */
  readonly maxPendingBytes?: number;
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
  #dropped = 0;

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
      if (this.#dropped > 0) {
        text = droppedLine(this.#dropped, format, origin + performance.now()) + "\n";
        this.#dropped = 0;
      }
      for (let i = 0; i < entries.length; i++) text += lineOf(entries[i], format, origin);
      const bytes = new TextEncoder().encode(text);
      this.#pendingBytes += bytes.length;
      const written = () => void (this.#pendingBytes -= bytes.length);
      // A batch that could not be written (stdout closed) is counted as dropped too.
      const failed = () => {
        written();
        this.#dropped += entries.length;
      };
      this.#writing = this.#writing.then(() => sink(bytes)).then(written, failed);
    }, { waitMs: delayMs, maxBatch: 256 });
  }

  /** Queue a line or a record; it is written within the delay, or sooner when many wait. */
  write(entry: LogEntry): void {
    this.#entries.push(entry);
  }

  /**
   * Write everything queued; resolves true once it has been written, or false when `timeoutMs`
   * (if given) passes first: a stdout that does not keep up must not hold up shutdown.
   */
  flush(timeoutMs?: number): Promise<boolean> {
    this.#entries.drain();
    return timeoutMs === undefined
      ? this.#writing.then(() => true)
      : settlesWithin(this.#writing, timeoutMs);
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

/** The line that says how many lines before it were dropped. */
function droppedLine(count: number, format: LogFormat, nowMs: number): string {
  const time = logTime(Math.floor(nowMs));
  const reason = "stdout did not keep up";
  return format === "json"
    ? `{"time":"${time}","dropped":${count},"reason":"${reason}"}`
    : `${time} log ${count} lines dropped: ${reason}`;
}

async function writeAll(output: { write(p: Uint8Array): Promise<number> }, bytes: Uint8Array) {
  let written = 0;
  while (written < bytes.length) written += await output.write(bytes.subarray(written));
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

/** Write out every log line queued in this process (shutdown), within `timeoutMs`. */
export async function flushLogs(timeoutMs: number): Promise<boolean> {
  const flushed = await Promise.all([...stdoutWriters.values()].map((w) => w.flush(timeoutMs)));
  return flushed.every(Boolean);
}
