/**
 * Bounds what an error storm can cause: at most `perKey` events per window for each distinct
 * error, in a Map of bounded size, with what was held back counted so that one line a window
 * can say so. Monitoring limits its error events with it (monitoring/sentry.ts), the server its
 * failure log (http/failure_log.ts).
 */

/** Limits; the defaults suit one server process. */
export interface ErrorThrottleOptions {
  /** Events per key within one window. */
  readonly perKey?: number;
  readonly windowMs?: number;
  /** Distinct keys tracked at once; errors beyond share one key, so memory stays bounded. */
  readonly maxKeys?: number;
}

/** How many events of one kind were held back since the last report. */
export interface Suppressed {
  readonly key: string;
  readonly count: number;
}

/** The key that errors share once the table is full. */
export const OVERFLOW_KEY = "(other errors)";

/** A limit per error key within fixed windows; pure apart from its own state (clock injected). */
export class ErrorThrottle {
  readonly #perKey: number;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  /** This window's admitted events per key, and what was held back since the last report. */
  readonly #keys = new Map<string, { admitted: number; held: number }>();
  #windowStart: number;

  /** `nowMs` starts the first window. */
  constructor(options: ErrorThrottleOptions = {}, nowMs = 0) {
    this.#perKey = options.perKey ?? 10;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxKeys = Math.max(1, options.maxKeys ?? 100);
    this.#windowStart = nowMs;
  }

  /** Whether an error with this key may be sent now; if not, it is counted as held back. */
  admit(key: string, nowMs: number): boolean {
    if (nowMs - this.#windowStart >= this.#windowMs) this.#newWindow(nowMs);
    if (!this.#keys.has(key) && this.#keys.size >= this.#maxKeys) key = OVERFLOW_KEY;
    const entry = this.#keys.get(key) ?? { admitted: 0, held: 0 };
    this.#keys.set(key, entry);
    const admitted = entry.admitted < this.#perKey;
    if (admitted) entry.admitted++;
    else entry.held++;
    return admitted;
  }

  /**
   * Once the window has passed (or at once with `force`), what was held back since the last
   * report, and a new window; otherwise undefined.
   */
  report(nowMs: number, force = false): Suppressed[] | undefined {
    if (!force && nowMs - this.#windowStart < this.#windowMs) return undefined;
    const suppressed = [...this.#keys].filter(([, e]) => e.held > 0)
      .map(([key, e]) => ({ key, count: e.held }));
    for (const entry of this.#keys.values()) entry.held = 0;
    this.#newWindow(nowMs);
    return suppressed;
  }

  /** How many keys the table holds now (for tests of its bound). */
  get size(): number {
    return this.#keys.size;
  }

  // Keys with nothing left to report are forgotten; the others keep their count for the report.
  #newWindow(nowMs: number): void {
    this.#windowStart = nowMs;
    for (const [key, entry] of this.#keys) {
      if (entry.held === 0) this.#keys.delete(key);
      else entry.admitted = 0;
    }
  }
}

// Caps on each part of a key: a message can embed request data of any length.
const MAX_NAME = 100;
const MAX_MESSAGE = 200;
const MAX_FRAME = 200;
// Enough frames to tell the callers of a shared helper apart.
const KEY_FRAMES = 3;

/**
 * What makes two errors "the same" for throttling: the type and the top three stack frames
 * (without line and column, as Sentry groups them), each cut to a bounded length; the message
 * only for an error without frames. A message often carries request data (`no user 4711`):
 * keyed on it, one throw site would get a budget per value.
 *
 * @example
 * errorKey(new TypeError("x is undefined")); // "TypeError @ at render (...) < at ..."
 */
export function errorKey(error: unknown): string {
  try {
    // Inside the try: `instanceof` throws for a revoked Proxy.
    if (!(error instanceof Error)) return `thrown ${typeof error}`;
    const name = String(error.name).slice(0, MAX_NAME);
    const message = String(error.message);
    const stack = typeof error.stack === "string" ? error.stack : "";
    // From after the message, which may hold lines of its own: V8's JSON.parse error quotes
    // its input, so a client's body could otherwise write the key's frames.
    const frames = [];
    let start = stack.indexOf("\n    at ", framesStart(stack, message));
    while (start !== -1 && frames.length < KEY_FRAMES) {
      const end = stack.indexOf("\n", start + 1);
      // Cut even when it is the last line: a frame can be as long as a function's name.
      const frame = stack.slice(
        start + 5,
        Math.min(end === -1 ? Infinity : end, start + 5 + MAX_FRAME),
      );
      frames.push(frame.replace(/:\d+:\d+(\)?)$/, "$1"));
      start = end === -1 ? -1 : stack.indexOf("\n    at ", end);
    }
    if (frames.length > 0) return `${name} @ ${frames.join(" < ")}`;
    return `${name}: ${message.slice(0, MAX_MESSAGE)}`;
  } catch {
    // A getter that throws: still one key, never a second fault.
    return "unreadable error";
  }
}

/**
 * Where the frames of a V8 stack begin: after its first line's message (looked for only where
 * the first line can hold it, so the work stays linear); for an empty message, after the first
 * line; else (the message changed after the stack was read) at the run of frame lines that
 * ends the stack. A line a client wrote into a message is followed by the message's own tail
 * (V8's JSON.parse error ends `" is not valid JSON`), which no frame line looks like.
 *
 * @example
 * framesStart("Error: boom\n    at f (a.ts:1:1)", "boom"); // 11
 */
export function framesStart(stack: string, message: string): number {
  if (message === "") {
    const lineEnd = stack.indexOf("\n");
    return lineEnd === -1 ? stack.length : lineEnd;
  }
  const at = stack.slice(0, MAX_NAME + 2 + message.length).indexOf(message);
  if (at !== -1) return at + message.length;
  let start = stack.length;
  for (;;) {
    const lineStart = stack.lastIndexOf("\n", start - 1);
    if (lineStart === -1 || !isFrameLine(stack.slice(lineStart, start))) return start;
    start = lineStart;
  }
}

// `\n    at name (place)` or `\n    at place:line:column`, as V8 writes a frame.
function isFrameLine(line: string): boolean {
  return line.startsWith("\n    at ") && (line.endsWith(")") || /:\d+:\d+$/.test(line));
}

/**
 * One log line for a report, or undefined when nothing was held back: `lead` of the total,
 * then at most `maxKeys` keys, the most held back first.
 *
 * @example
 * formatSuppressed(report, (n) => `monitoring: ${n} error events suppressed`);
 * // 'monitoring: 98 error events suppressed: 90 of "TypeError @ ...", and 2 more'
 */
export function formatSuppressed(
  suppressed: readonly Suppressed[],
  lead: (total: number) => string,
  maxKeys = 3,
): string | undefined {
  if (suppressed.length === 0) return undefined;
  const total = suppressed.reduce((sum, s) => sum + s.count, 0);
  const top = suppressed.toSorted((a, b) => b.count - a.count).slice(0, maxKeys);
  const named = top.map((s) => `${s.count} of ${JSON.stringify(s.key)}`).join(", ");
  const more = suppressed.length > top.length ? `, and ${suppressed.length - top.length} more` : "";
  return `${lead(total)}: ${named}${more}`;
}
