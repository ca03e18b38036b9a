/** The log of failed requests on stderr, and the per-error limit it shares with monitoring. */

/** Limits; the defaults suit one server process. */
export interface ErrorLimitOptions {
  /** Admitted per distinct error within one window. */
  readonly perKey?: number;
  readonly windowMs?: number;
  /** Distinct errors tracked at once; the others share one key, so memory stays bounded. */
  readonly maxKeys?: number;
  /** Milliseconds on a monotonic clock; `performance.now` by default. */
  readonly now?: () => number;
}

const DEFAULT_LIMIT = { perKey: 10, windowMs: 60_000, maxKeys: 100 };

/** The key that errors share once the table is full. */
export const OVERFLOW_KEY = "(other errors)";

/** At most `perKey` errors of each kind ({@link errorKey}) a window; the rest counted and told. */
export class ErrorLimit {
  readonly #options: Required<ErrorLimitOptions>;
  readonly #tell: (total: number, named: string) => void;
  readonly #counts = new Map<string, { admitted: number; held: number }>();
  #windowStart: number;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: ErrorLimitOptions, tell: (total: number, named: string) => void) {
    this.#options = { ...DEFAULT_LIMIT, now: () => performance.now(), ...options };
    this.#tell = tell;
    this.#windowStart = this.#options.now();
  }

  /** Whether this error may be sent now; if not, it is counted. */
  admit(error: unknown): boolean {
    const { perKey, windowMs, maxKeys, now } = this.#options;
    if (now() - this.#windowStart >= windowMs) this.flush();
    let key = errorKey(error);
    if (!this.#counts.has(key) && this.#counts.size >= maxKeys) key = OVERFLOW_KEY;
    const count = this.#counts.getOrInsert(key, { admitted: 0, held: 0 });
    if (count.admitted < perKey) {
      count.admitted++;
      return true;
    }
    count.held++;
    this.#timer ??= setTimeout(() => this.flush(), windowMs);
    Deno.unrefTimer(this.#timer);
    return false;
  }

  /** Tell what was held back, if anything, and start a new window. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const held = [...this.#counts].filter(([, c]) => c.held > 0);
    held.sort(([, a], [, b]) => b.held - a.held);
    this.#counts.clear();
    this.#windowStart = this.#options.now();
    if (held.length === 0) return;
    const total = held.reduce((sum, [, c]) => sum + c.held, 0);
    const named = held.slice(0, 3).map(([key, c]) => `${c.held} of ${JSON.stringify(key)}`);
    if (held.length > 3) named.push(`and ${held.length - 3} more`);
    this.#tell(total, named.join(", "));
  }
}

// Caps on the parts of a key: a message can embed request data of any length.
const MAX_NAME = 100, MAX_MESSAGE = 200;

/** Errors are "the same" by type and top three frames sans line:col (as Sentry), else message. */
export function errorKey(error: unknown): string {
  try {
    // Inside the try: `instanceof` throws for a revoked Proxy.
    if (!(error instanceof Error)) return `thrown ${typeof error}`;
    const name = String(error.name).slice(0, MAX_NAME);
    const message = String(error.message);
    const stack = typeof error.stack === "string" ? error.stack : "";
    // Each cut, and without line and column: a frame can be as long as a function's name.
    const frames = (stack.slice(framesStart(stack, message)).match(/\n {4}at [^\n]{0,200}/g) ?? [])
      .slice(0, 3).map((frame) => frame.slice(5).replace(/:\d+:\d+(\)?)$/, "$1"));
    if (frames.length > 0) return `${name} @ ${frames.join(" < ")}`;
    return `${name}: ${message.slice(0, MAX_MESSAGE)}`;
  } catch {
    return "unreadable error"; // a getter that throws
  }
}

/** Where a V8 stack's frames begin: after the message (its line breaks must not pass for frames),
 * or if the message has changed since, at the frame lines that end the stack. */
export function framesStart(stack: string, message: string): number {
  // Looked for only where the first line can hold it, so the work stays linear.
  const at = stack.slice(0, MAX_NAME + 2 + message.length).indexOf(message);
  if (at !== -1) return at + message.length;
  let start = stack.length;
  for (;;) {
    const lineStart = stack.lastIndexOf("\n", start - 1);
    const line = stack.slice(lineStart, start);
    const frameLine = line.startsWith("\n    at ") &&
      (line.endsWith(")") || /:\d+:\d+$/.test(line));
    if (lineStart === -1 || !frameLine) return start;
    start = lineStart;
  }
}

/** The longest entry written; a stack trace with its causes is a few KiB. */
export const MAX_ENTRY_CHARS = 8 * 1024;

/** Writes failures within a limit per distinct error, and counts the rest. */
export class FailureLog {
  readonly #limit: ErrorLimit;
  readonly #write: (entry: string) => void;

  /** `write` gets one entry at a time; `console.error` by default. */
  constructor(options: ErrorLimitOptions & { write?: (entry: string) => void } = {}) {
    const { perKey, windowMs } = { ...DEFAULT_LIMIT, ...options };
    this.#write = options.write ?? ((entry) => console.error(entry));
    this.#limit = new ErrorLimit(options, (total, named) =>
      this.#writeSafely(oneEntry(
        `request failed: ${total} more failures not logged in full (at most ${perKey} per ` +
          `error every ${Math.round(windowMs / 1000)} s): ${named}`,
      )));
  }

  /** Log `line` and the error with its stack, unless that error is over its limit. Never throws. */
  failed(line: string, error: unknown): void {
    if (!this.#limit.admit(error)) return;
    this.#writeSafely(`${line} ${permissionHint(error) ?? shown(error)}`);
  }

  /** Write the count of what was held back now (at shutdown). */
  flush(): void {
    this.#limit.flush();
  }

  // A log that cannot be written (stderr closed) must not turn a 500 into a crash.
  #writeSafely(entry: string): void {
    try {
      this.#write(entry);
    } catch { /* nowhere left to say it */ }
  }
}

/** For a `NotCapable` error, the permission to add to deno.json; `undefined` for any other. */
export function permissionHint(error: unknown): string | undefined {
  try {
    if (!(error instanceof Deno.errors.NotCapable)) return undefined;
    const [, kind, value] = /^Requires (\w+) access to "(.*)", run again/s
      .exec(error.message) ?? [];
    if (kind === undefined) return undefined;
    const quoted = oneEntry(JSON.stringify(value));
    return `no ${kind} access to ${quoted}: add ${quoted} to permissions.app.${kind} in deno.json`;
  } catch {
    return undefined;
  }
}

// The error as console.error would show it (its stack and cause), as one entry.
function shown(error: unknown): string {
  try {
    return oneEntry(typeof error === "string" ? error : Deno.inspect(error));
  } catch {
    return `(a value that cannot be shown: ${errorKey(error)})`; // a revoked Proxy, say
  }
}

/** Text cut to one entry, control, format and separator characters escaped and bare lines
 * indented, so a client's input can neither restyle the terminal nor pass for an entry. */
function oneEntry(text: string): string {
  const kept = text.slice(0, MAX_ENTRY_CHARS);
  const safe = kept.replace(/(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => {
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  }).replace(/\n(?![ \t])/g, "\n  ");
  const more = text.length - kept.length;
  return more > 0 ? `${safe}... (${more} more characters)` : safe;
}

let processLog: FailureLog | undefined;
/** The process-wide failure log, so shutdown can flush it. */
export function defaultFailureLog(): FailureLog {
  return processLog ??= new FailureLog();
}
