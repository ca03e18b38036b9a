/**
 * The log of failed requests, on stderr: a failure's error and stack at most `perKey` times a
 * window for each distinct error (its type and top frames, as error_throttle.ts keys it), and
 * once a window one line that counts the rest. Each entry is cut to 8 KiB: a message can carry
 * request data of any size.
 *
 * Unbounded, a request the app fails on, sent in a loop, would write a stack trace per request:
 * the log would grow with the attack, and `console.error` writes synchronously, so a slow reader
 * of stderr (a full pipe) would stall the whole server. Monitoring limits its error events the
 * same way (monitoring/sentry.ts); this is the limit for the log, which holds with monitoring off.
 */
import {
  errorKey,
  ErrorThrottle,
  type ErrorThrottleOptions,
  formatSuppressed,
} from "../error_throttle.ts";

/** Limits and where the lines go; the defaults suit one server process. */
export interface FailureLogOptions extends ErrorThrottleOptions {
  /** Writes one entry (a failure with its error, or a count). `console.error` by default. */
  readonly write?: (entry: string) => void;
  /** Milliseconds on any monotonic clock; `performance.now` by default. */
  readonly now?: () => number;
}

const DEFAULT_PER_KEY = 10;
const DEFAULT_WINDOW_MS = 60_000;
/** The longest entry written; a stack trace with its causes is a few KiB. */
export const MAX_ENTRY_CHARS = 8 * 1024;

/** Writes failures within a limit per distinct error, and counts the rest. */
export class FailureLog {
  readonly #throttle: ErrorThrottle;
  readonly #write: (entry: string) => void;
  readonly #now: () => number;
  readonly #windowMs: number;
  readonly #lead: (total: number) => string;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: FailureLogOptions = {}) {
    const perKey = options.perKey ?? DEFAULT_PER_KEY;
    this.#windowMs = options.windowMs ?? DEFAULT_WINDOW_MS;
    this.#now = options.now ?? (() => performance.now());
    this.#throttle = new ErrorThrottle(
      { perKey, windowMs: this.#windowMs, maxKeys: options.maxKeys },
      this.#now(),
    );
    this.#write = options.write ?? ((entry) => console.error(entry));
    const seconds = Math.round(this.#windowMs / 1000);
    this.#lead = (total) =>
      `request failed: ${total} more failures not logged in full ` +
      `(at most ${perKey} per error every ${seconds} s)`;
  }

  /**
   * Log one failure as `line` and the error with its stack, unless that error is over its limit.
   * Never throws, whatever was thrown.
   *
   * @example
   * failureLog.failed("request failed:", error);
   */
  failed(line: string, error: unknown): void {
    const now = this.#now();
    this.#tell(this.#throttle.report(now));
    const key = errorKey(error);
    if (this.#throttle.admit(key, now)) {
      this.#writeSafely(`${line} ${shown(error, key)}`);
      return;
    }
    // The count is told when the window ends, even when no failure comes after it. Unref'd:
    // it never keeps the process alive, and shutdown flushes it.
    if (this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.flush();
      }, this.#windowMs);
      Deno.unrefTimer(this.#timer);
    }
  }

  /** Write the count of what was held back now (at shutdown), and stop the window's timer. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#tell(this.#throttle.report(this.#now(), true));
  }

  #tell(suppressed: ReturnType<ErrorThrottle["report"]>): void {
    const line = suppressed && formatSuppressed(suppressed, this.#lead);
    if (line) this.#writeSafely(oneEntry(line));
  }

  // A log that cannot be written (stderr closed) must not turn a 500 into a crash.
  #writeSafely(entry: string): void {
    try {
      this.#write(entry);
    } catch {
      // Nowhere left to say it.
    }
  }
}

// The error as console.error would show it (its stack and cause), cut to the entry's size.
function shown(error: unknown, key: string): string {
  try {
    return oneEntry(typeof error === "string" ? error : Deno.inspect(error));
  } catch {
    // A revoked Proxy, a getter that throws: what the key says is all there is.
    return `(a value that cannot be shown: ${key})`;
  }
}

/**
 * Text that reads as one entry, whatever a message quoted: control and format characters (a
 * terminal's escapes, a carriage return, a byte-order mark, bidi overrides, line separators)
 * written as `\xNN` or `\u{N}`, and every line that does not start with a space or a tab
 * indented, so a client's input in a message can neither restyle the terminal nor pass for an
 * entry. Cut first, so the escaping stays within the entry's size.
 */
function oneEntry(text: string): string {
  const kept = text.length > MAX_ENTRY_CHARS ? text.slice(0, MAX_ENTRY_CHARS) : text;
  const safe = kept
    .replace(UNSAFE, (c) => {
      const code = c.codePointAt(0)!;
      return code <= 0xff
        ? `\\x${code.toString(16).padStart(2, "0")}`
        : `\\u{${code.toString(16)}}`;
    })
    .replace(/\n(?![ \t])/g, "\n  ");
  const more = text.length - kept.length;
  return more > 0 ? `${safe}... (${more} more characters)` : safe;
}

// Control, format and separator characters (Unicode's Cc, Cf, Zl, Zp), but the tab and the
// line feed.
const UNSAFE = /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

let processLog: FailureLog | undefined;
/** The process-wide failure log, so shutdown can flush it. */
export function defaultFailureLog(): FailureLog {
  processLog ??= new FailureLog();
  return processLog;
}
