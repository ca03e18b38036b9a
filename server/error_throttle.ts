/**
 * Bounds what an error storm can cause: at most `perKey` per window for each distinct error,
 * counted in a table of bounded size, with what was held back counted so it can be logged once
 * per window instead of lost silently. Monitoring limits its error events with it
 * (monitoring/sentry.ts), the server its failure log (http/failure_log.ts).
 */

/** Limits; the defaults suit one server process. */
export interface ErrorThrottleOptions {
  /** Events per key within any `windowMs`. */
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

/** The key that errors share once the table is full of live keys. */
export const OVERFLOW_KEY = "(other errors)";

// Caps on each part of a key: a message can embed request data of any length.
const MAX_NAME = 100;
const MAX_MESSAGE = 200;
const MAX_FRAME = 200;

interface Entry {
  /** When this key's last `perKey` events were admitted: a ring, oldest at `next`. */
  readonly admitted: number[];
  next: number;
  suppressed: number;
}

/** A sliding-window limit per error key; pure apart from its own state (clock injected). */
export class ErrorThrottle {
  readonly #perKey: number;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #entries = new Map<string, Entry>();
  #reportedAt: number;

  /** `nowMs` starts the first reporting window. */
  constructor(options: ErrorThrottleOptions = {}, nowMs = 0) {
    this.#perKey = Math.max(0, options.perKey ?? 10);
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxKeys = Math.max(1, options.maxKeys ?? 100);
    this.#reportedAt = nowMs;
  }

  /** Whether an error with this key may be sent now; if not, it is counted as suppressed. */
  admit(key: string, nowMs: number): boolean {
    const entry = this.#entryFor(key, nowMs);
    const { admitted } = entry;
    if (admitted.length < this.#perKey) {
      admitted.push(nowMs);
      return true;
    }
    if (admitted.length > 0 && admitted[entry.next] <= nowMs - this.#windowMs) {
      admitted[entry.next] = nowMs;
      entry.next = (entry.next + 1) % admitted.length;
      return true;
    }
    entry.suppressed++;
    return false;
  }

  /**
   * Once a window has passed since the last report (or at once with `force`), return what
   * was suppressed meanwhile, and forget keys that have gone quiet; otherwise undefined.
   */
  report(nowMs: number, force = false): Suppressed[] | undefined {
    if (!force && nowMs - this.#reportedAt < this.#windowMs) return undefined;
    this.#reportedAt = nowMs;
    const suppressed: Suppressed[] = [];
    for (const [key, entry] of this.#entries) {
      if (entry.suppressed > 0) suppressed.push({ key, count: entry.suppressed });
      entry.suppressed = 0;
      if (this.#isQuiet(entry, nowMs)) this.#entries.delete(key);
    }
    return suppressed;
  }

  /** How many keys the table holds now (for tests of its bound). */
  get size(): number {
    return this.#entries.size;
  }

  #entryFor(key: string, nowMs: number): Entry {
    const found = this.#entries.get(key);
    if (found !== undefined) return found;
    if (this.#entries.size >= this.#maxKeys) this.#evictQuiet(nowMs);
    if (this.#entries.size >= this.#maxKeys) {
      // Live keys fill the table: new kinds of error share one budget rather than grow it,
      // so the table never holds more than maxKeys + 1 entries.
      key = OVERFLOW_KEY;
      const overflow = this.#entries.get(key);
      if (overflow !== undefined) return overflow;
    }
    const entry: Entry = { admitted: [], next: 0, suppressed: 0 };
    this.#entries.set(key, entry);
    return entry;
  }

  // Keys whose events are all older than the window and that hold no unreported count.
  #evictQuiet(nowMs: number): void {
    for (const [key, entry] of this.#entries) {
      if (entry.suppressed === 0 && this.#isQuiet(entry, nowMs)) this.#entries.delete(key);
    }
  }

  #isQuiet(entry: Entry, nowMs: number): boolean {
    const newest = entry.admitted.length === 0
      ? -Infinity
      : entry.admitted[(entry.next + entry.admitted.length - 1) % entry.admitted.length];
    return newest <= nowMs - this.#windowMs;
  }
}

/**
 * What makes two errors "the same" for throttling: the type and the top three stack frames
 * (without line and column), each cut to a bounded length; the message only for an error
 * without frames. Sentry groups an error with a stack by its frames, not its message, and a
 * message often carries request data (`no user 4711`): keyed on it, one throw site would get a
 * budget per value and could send up to `maxKeys` times its share.
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
    const frames = topFrames(error.stack, message, KEY_FRAMES);
    if (frames !== "") return `${name} @ ${frames}`;
    return `${name}: ${message.slice(0, MAX_MESSAGE)}`;
  } catch {
    // A getter that throws: still one key, never a second fault.
    return "unreadable error";
  }
}

// Enough frames to tell the callers of a shared helper apart.
const KEY_FRAMES = 3;
// The stack's first line is `Name: message`; a message found this far in is that line's.
const MAX_HEADER_START = MAX_NAME + 2;

/**
 * Where in a V8 stack the message of its first line (`Name: message`) ends, or -1 when it is
 * not found there. Looked for only where the first line can hold it, so the work stays linear
 * in the message. A message can hold lines of its own (V8's JSON.parse error quotes its input):
 * what comes before this offset is not frames.
 *
 * @example
 * messageEnd("Error: boom\n    at f (a.ts:1:1)", "boom"); // 11
 */
export function messageEnd(stack: string, message: string): number {
  if (message === "") return -1;
  const at = stack.slice(0, MAX_HEADER_START + message.length).indexOf(message);
  return at === -1 ? -1 : at + message.length;
}

/**
 * Where the frames of a V8 stack begin: after its first line's message ({@link messageEnd});
 * for an empty message, after the first line (V8 writes the name alone); else (a message
 * changed after the stack was read) at the run of frame lines that ends the stack. A line a
 * client wrote into a message is followed by the message's own tail (V8's JSON.parse error
 * ends `" is not valid JSON`), which no frame line looks like, so the run starts after it. The
 * price, for such a stale stack only: when text that is not a frame was appended to the stack
 * (a `Caused by:` tail), its own frames are taken for message. Each line is looked at once.
 *
 * @example
 * framesStart("Error: boom\n    at f (a.ts:1:1)", "boom"); // 11
 */
export function framesStart(stack: string, message: string): number {
  if (message === "") {
    const lineEnd = stack.indexOf("\n");
    return lineEnd === -1 ? stack.length : lineEnd;
  }
  const end = messageEnd(stack, message);
  if (end !== -1) return end;
  let start = stack.length;
  for (;;) {
    const lineStart = stack.lastIndexOf("\n", start - 1);
    if (lineStart === -1 || lineStart >= start || !isFrameLine(stack, lineStart, start)) {
      return start;
    }
    start = lineStart;
  }
}

// `\n    at name (place)` or `\n    at place:line:column`, as V8 writes a frame.
function isFrameLine(stack: string, start: number, end: number): boolean {
  if (!stack.startsWith("\n    at ", start)) return false;
  return stack[end - 1] === ")" || /:\d+:\d+$/.test(stack.slice(start, end));
}

// The first `count` "at ..." lines of a V8 stack, found without splitting a long stack into
// lines. Line and column are dropped, as Sentry's grouping drops them: two throws in one
// function are one error (GET /debug/error alternates between two lines to get past dedupe).
// The search starts after the message, which may hold lines of its own: V8's JSON.parse error
// quotes its input, so a client's body could otherwise write the key's frames.
function topFrames(stack: unknown, message: string, count: number): string {
  if (typeof stack !== "string") return "";
  const frames: string[] = [];
  const from = framesStart(stack, message);
  let start = stack.indexOf("\n    at ", from);
  while (start !== -1 && frames.length < count) {
    const end = stack.indexOf("\n", start + 1);
    // Cut even when it is the last line: a frame can be as long as a function's name.
    const frame = stack.slice(
      start + 5,
      Math.min(end === -1 ? stack.length : end, start + 5 + MAX_FRAME),
    );
    frames.push(frame.replace(/:\d+:\d+(\)?)$/, "$1"));
    start = end === -1 ? -1 : stack.indexOf("\n    at ", end);
  }
  return frames.join(" < ");
}

/**
 * One log line for a report, or undefined when nothing was suppressed: `lead` of the total,
 * then at most `maxKeys` keys, the most suppressed first.
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
  const top = [...suppressed].sort((a, b) => b.count - a.count).slice(0, maxKeys);
  const named = top.map((s) => `${s.count} of ${JSON.stringify(s.key)}`).join(", ");
  const more = suppressed.length > top.length ? `, and ${suppressed.length - top.length} more` : "";
  return `${lead(total)}: ${named}${more}`;
}
