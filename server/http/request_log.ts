/** A line per request, refusals counted (JSON or text) to stdout, never making the server wait;
 * client strings are escaped (C0, C1, bidi, U+FEFF) so none can forge or hide a line. */
import type { RefusalLine } from "./refusal_log.ts";

export type LogFormat = "json" | "text";

/** What is logged about a request, in the order a JSON line lists it. */
export interface RequestRecord {
  /** When it was answered, ISO 8601 in UTC. */
  readonly time: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly durationMs: number;
  /** Response body size when known (Content-Length), otherwise null (streamed). */
  readonly bytes: number | null;
  readonly requestId: string;
}

/** One request as one line (no newline). */
export function formatRecord(record: RequestRecord, format: LogFormat): string {
  const { time, method, path, status, durationMs, bytes, requestId } = record;
  if (format === "json") return json({ time, method, path, status, durationMs, bytes, requestId });
  const id = text(requestId);
  return `${time} ${text(method)} "${text(path)}" ${status} ${durationMs}ms ${bytes ?? "-"}B ${id}`;
}

/** `count` refused requests alike as one line (no newline), the first with its request's id. */
export function formatRefusal(
  { status, reason, client, count, bytes }: RefusalLine,
  requestId: string | undefined,
  format: LogFormat,
  time: string = new Date().toISOString(),
): string {
  const id = requestId ?? "-";
  if (format === "json") {
    return json({ time, msg: "refused", count, status, reason, client, bytes, requestId: id });
  }
  const what = `${count} x ${status} "${text(reason)}" from ${text(client)}`;
  return `${time} refused ${what} ${bytes ?? "-"}B ${text(id)}`;
}

/** A line from the server itself (a hint to the operator), in the log's format. */
export function formatNotice(message: string, format: LogFormat, time = new Date().toISOString()) {
  return format === "json" ? json({ time, msg: "server", message }) : `${time} server ${message}`;
}

// JSON.stringify, also escaping what it leaves raw: C1, bidi controls, U+FEFF, U+2028.
function json(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu,
    // Each UTF-16 unit of it: a character outside the BMP is a pair of escapes.
    (c) => c.split("").map((u) => "\\u" + u.charCodeAt(0).toString(16).padStart(4, "0")).join(""),
  );
}

const text = (value: string) => json(value).slice(1, -1);

const DROP_REASON = "stdout did not keep up, or failed";
const encoder = new TextEncoder();

/** Lines gather for `delayMs`, then go out one write at a time; past `maxWaiting` (UTF-16 units)
 * they are dropped and told in the next write; `flush` resolves to the number unwritten. */
export function createLogWriter(
  out: { write(bytes: Uint8Array): Promise<number> },
  format: LogFormat,
  { maxWaiting = 1024 * 1024, delayMs = 50 }: { maxWaiting?: number; delayMs?: number } = {},
): { write(line: string): void; flush(timeoutMs: number): Promise<number> } {
  let queue: string[] = [];
  let waiting = 0; // size of the lines queued or being written
  let inWrite = 0; // lines in the write under way
  let dropped = 0; // lost, and not said yet
  let torn = false; // a failed write left half a line
  // Cleared in the turn the drain finds the queue empty, so no line waits for an ended one.
  let draining: Promise<void> | undefined;
  let hurry = false; // a flush waits: no more gathering
  let wake = () => {};

  async function drain() {
    while (queue.length > 0) {
      if (!hurry && waiting <= maxWaiting / 2) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delayMs);
          wake = () => (clearTimeout(timer), resolve());
        });
      }
      const lines = queue;
      const size = lines.reduce((sum, line) => sum + line.length + 1, 0);
      [queue, inWrite] = [[], lines.length + dropped];
      if (dropped > 0) lines.unshift(droppedLine(dropped, format));
      dropped = 0;
      const bytes = encoder.encode((torn ? "\n" : "") + lines.join("\n") + "\n");
      let written = 0;
      try {
        while (written < bytes.length) written += await out.write(bytes.subarray(written));
      } catch { /* counted below, and said in the next write */ }
      if (written < bytes.length) dropped += inWrite;
      // A write that wrote nothing leaves a line an earlier one cut short as it was.
      torn = written < bytes.length && (written > 0 || torn);
      waiting -= size;
      inWrite = 0;
    }
    draining = undefined;
    hurry = false;
  }

  return {
    write(line) {
      if (waiting > 0 && waiting + line.length + 1 > maxWaiting) {
        dropped++;
        return;
      }
      queue.push(line);
      waiting += line.length + 1;
      if (draining === undefined) draining = drain();
      else if (waiting > maxWaiting / 2) wake(); // lines come faster than the delay lets out
    },
    async flush(timeoutMs) {
      hurry = draining !== undefined;
      wake();
      let timer;
      const late = new Promise((resolve) => timer = setTimeout(resolve, timeoutMs));
      await Promise.race([draining, late]);
      clearTimeout(timer);
      return dropped + queue.length + inWrite;
    },
  };
}

function droppedLine(count: number, format: LogFormat, time = new Date().toISOString()) {
  return format === "json"
    ? json({ time, dropped: count, reason: DROP_REASON })
    : `${time} log ${count} lines dropped: ${DROP_REASON}`;
}

// Process-wide, so shutdown can flush them: one per format (a process serves one; tests more).
const stdoutWriters = new Map<LogFormat, ReturnType<typeof createLogWriter>>();

/** A function that queues a line for stdout, through the process's writer for `format`. */
export function stdoutLog(format: LogFormat): (line: string) => void {
  if (!stdoutWriters.has(format)) stdoutWriters.set(format, createLogWriter(Deno.stdout, format));
  return stdoutWriters.get(format)!.write;
}

/** Write out every queued line at shutdown, within `timeoutMs`; say on stderr what could not be. */
export async function flushLogs(timeoutMs: number): Promise<boolean> {
  const counts = await Promise.all([...stdoutWriters.values()].map((w) => w.flush(timeoutMs)));
  const unwritten = counts.reduce((sum, count) => sum + count, 0);
  if (unwritten > 0) console.error(`request log: ${unwritten} lines not written: ${DROP_REASON}`);
  return unwritten === 0;
}
