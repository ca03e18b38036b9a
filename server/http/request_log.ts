/**
 * One log line per request: JSON by default (for log pipelines), plain text with
 * `LOG_FORMAT=text` (for people). Lines are formatted and written in batches, so logging costs a
 * record and a clock reading per request, not a format and a write.
 */
import { requestHeader } from "./request_headers.ts";
import { BatchQueue } from "../batch_queue.ts";

/** What is logged about a request. */
export interface RequestRecord {
  /**
   * When the request was answered, as `performance.now()` read it; written as the wall-clock
   * time, ISO 8601 in UTC, with a `timeOrigin` measured as its batch is formatted.
   */
  readonly answeredAt: number;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  /** Response body size when known (Content-Length), otherwise null (streamed). */
  readonly bytes: number | null;
  readonly requestId: string;
}

/** Log line format. */
export type LogFormat = "json" | "text";

/**
 * Format one record as a single line (no newline). `timeOrigin` is the wall-clock time (ms since
 * the epoch) when `performance.now()` read 0: see {@link clockOrigin}.
 */
export function formatRecord(record: RequestRecord, format: LogFormat, timeOrigin: number): string {
  const time = logTime(Math.floor(timeOrigin + record.answeredAt));
  if (format === "json") {
    // Built by hand, in one template: this runs for every request, and it is about 3x cheaper
    // than stringifying an object. Strings a client controls are escaped by jsonText; the rest
    // are numbers or values this server made.
    return `{"time":"${time}","method":"${jsonText(record.method)}","path":"${
      jsonText(record.path)
    }","status":${record.status},"durationMs":${record.durationMs},"bytes":${record.bytes},"requestId":"${
      jsonText(record.requestId)
    }"}`;
  }
  const bytes = record.bytes === null ? "-" : String(record.bytes);
  return `${time} ${record.method} "${
    jsonText(record.path)
  }" ${record.status} ${record.durationMs}ms ${bytes}B ${record.requestId}`;
}

// Printable ASCII but `"` and `\`: the text as it stands between a JSON string's quotes.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The text between the quotes of `JSON.stringify(text)`, without its cost for plain text. */
function jsonText(text: string): string {
  return PLAIN.test(text) ? text : JSON.stringify(text).slice(1, -1);
}

/**
 * The wall-clock time, in ms since the epoch, at which `performance.now()` read 0, measured now.
 * Not `performance.timeOrigin`, fixed at start-up: the wall clock drifts from the monotonic one and
 * can be set, and a log's times must agree with other systems'. Measured once per batch, it stands
 * for every line in it: the request path reads one clock, not two (a clock reading cost about
 * 0.17 µs of a `GET /`, in interleaved runs).
 */
export function clockOrigin(): number {
  return Date.now() - performance.now();
}

let lastMs = NaN;
let lastIso = "";

/**
 * The time for a log line, ISO 8601 in UTC. Formatted once per millisecond: under load many
 * requests end in the same one, and `toISOString` costs about 1 µs. Called as lines are
 * formatted, with their batch: on the request path it was about 1 µs per request in a CPU profile
 * of `GET /`, run cold once per millisecond.
 */
export function logTime(nowMs: number = Date.now()): string {
  if (nowMs !== lastMs) {
    lastMs = nowMs;
    lastIso = new Date(nowMs).toISOString();
  }
  return lastIso;
}

// Accept a caller's id (from a proxy or load balancer) only if it is short and harmless.
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id to use: the incoming `X-Request-Id` if sane, else a new random one. */
export function requestIdFor(req: Request): string {
  const incoming = requestHeader(req, "x-request-id");
  return incoming !== null && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

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
}

/**
 * Collects lines and request records and writes them in batches to a sink (stdout by default).
 * A record is formatted with its batch, in one loop: formatted between requests, a line cost the
 * server about 7 µs more (interleaved runs of `GET /`, 12 rounds), as that code ran cold every
 * time. The record itself is what is queued: a formatting closure per request, as before, was
 * two more objects for the collector.
 */
export class LineWriter {
  readonly #entries: BatchQueue<LogEntry>;
  #writing: Promise<void> = Promise.resolve();

  constructor(options: LineWriterOptions = {}) {
    const { sink = (b) => writeOut(Deno.stdout, b), delayMs = 50, format = "json" } = options;
    const timeOrigin = options.timeOrigin ?? clockOrigin;
    this.#entries = new BatchQueue((entries) => {
      const origin = timeOrigin();
      let text = "";
      for (let i = 0; i < entries.length; i++) text += lineOf(entries[i], format, origin);
      const bytes = new TextEncoder().encode(text);
      this.#writing = this.#writing.then(() => sink(bytes)).then(() => {}, () => {});
    }, { waitMs: delayMs, maxBatch: 256 });
  }

  /** Queue a line or a record; it is written within the delay, or sooner when many wait. */
  write(entry: LogEntry): void {
    this.#entries.push(entry);
  }

  /** Write everything queued; resolves when it has been written. */
  flush(): Promise<void> {
    this.#entries.drain();
    return this.#writing;
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

/** An output written to as stdout is: synchronously, or with a promise. */
export interface Output {
  writeSync(bytes: Uint8Array): number;
  write(bytes: Uint8Array): Promise<number>;
}

/**
 * Write all of `bytes`: synchronously, as `console.log` writes, and what a synchronous write
 * could not take (a non-blocking stdout that is full, say) with the asynchronous writes.
 *
 * Synchronous because Deno's asynchronous write to stdout cost the server about 0.6 µs per
 * request of `GET /` (a batch of 256 lines at a time, to /dev/null; interleaved runs, 8 rounds),
 * where the synchronous write was within the runs' noise. The asynchronous write is handed to
 * another thread, a switch of context on a busy core; and a stdout that did not keep up grew a
 * chain of pending writes without bound.
 * Written so, a slow reader slows the server down, as it does `console.log`'s callers.
 */
export function writeOut(output: Output, bytes: Uint8Array): Promise<void> {
  let written = 0;
  try {
    while (written < bytes.length) written += output.writeSync(bytes.subarray(written));
    return Promise.resolve();
  } catch {
    return writeAll(output, bytes.subarray(written));
  }
}

async function writeAll(output: Output, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await output.write(bytes.subarray(written));
}
