/**
 * One log line per request: what it records (time, method, path, status, duration, size,
 * request id), how a record reads as a line (JSON by default, for log pipelines; plain text with
 * `LOG_FORMAT=text`, for people), and how a request's id is chosen. The lines are written in
 * batches by log_writer.ts.
 */
import { requestHeader } from "./request_headers.ts";

/** What is logged about a request. */
export interface RequestRecord {
  /**
   * When the request was answered, as `performance.now()` read it; written as the wall-clock
   * time, ISO 8601 in UTC, with the origin its batch measures (log_clock.ts).
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
 * the epoch) when `performance.now()` read 0: see log_clock.ts.
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
  // The method and the id are checked before they get here (an HTTP token; requestIdFor), but a
  // line must not depend on that: escaped like the path, they cannot start a line of their own.
  return `${time} ${jsonText(record.method)} "${
    jsonText(record.path)
  }" ${record.status} ${record.durationMs}ms ${bytes}B ${jsonText(record.requestId)}`;
}

// Printable ASCII but `"` and `\`: the text as it stands between a JSON string's quotes.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The text between the quotes of `JSON.stringify(text)`, without its cost for plain text. */
function jsonText(text: string): string {
  return PLAIN.test(text) ? text : JSON.stringify(text).slice(1, -1);
}

let lastMs = NaN;
let lastIso = "";

/**
 * The time for a log line, ISO 8601 in UTC. Formatted once per millisecond: under load many
 * requests end in the same one, and `toISOString` costs about 1 µs. Called as lines are
 * formatted, with their batch: on the request path it was about 1 µs per request in a CPU profile
 * of `GET /`, run cold once per millisecond.
 */
export function logTime(nowMs: number): string {
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
