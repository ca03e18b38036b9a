/**
 * The log of failed requests, on stderr: a failure's error and stack at most `perKey` times a
 * window for each distinct error (error_throttle.ts), and once a window one line that counts
 * the rest, so a request the app fails on, sent in a loop, cannot grow the log with the attack
 * or stall the server on a slow stderr. Each entry is one entry, cut to 8 KiB, whatever a
 * message quotes. A missing permission of the app's code is one line saying what to grant.
 */
import {
  errorKey,
  ErrorThrottle,
  type ErrorThrottleOptions,
  formatSuppressed,
} from "../error_throttle.ts";

/** Limits and where the lines go; the defaults suit one server process. */
export interface FailureLogOptions extends ErrorThrottleOptions {
  /** Writes one entry. `console.error` by default. */
  readonly write?: (entry: string) => void;
  /** Milliseconds on any monotonic clock; `performance.now` by default. */
  readonly now?: () => number;
}

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

  constructor({ perKey = 10, windowMs = 60_000, maxKeys, write, now }: FailureLogOptions = {}) {
    this.#now = now ?? (() => performance.now());
    this.#windowMs = windowMs;
    this.#throttle = new ErrorThrottle({ perKey, windowMs, maxKeys }, this.#now());
    this.#write = write ?? ((entry) => console.error(entry));
    this.#lead = (total) =>
      `request failed: ${total} more failures not logged in full ` +
      `(at most ${perKey} per error every ${Math.round(windowMs / 1000)} s)`;
  }

  /**
   * Log one failure as `line` and the error with its stack, unless that error is over its
   * limit. Never throws, whatever was thrown.
   *
   * @example
   * failureLog.failed("request failed:", error);
   */
  failed(line: string, error: unknown): void {
    const now = this.#now();
    this.#tell(this.#throttle.report(now));
    const key = errorKey(error);
    if (this.#throttle.admit(key, now)) {
      this.#writeSafely(`${line} ${permissionHint(error) ?? shown(error, key)}`);
    } else if (this.#timer === undefined) {
      // The count is told when the window ends, even with no failure after it. Unref'd: it
      // never keeps the process alive, and shutdown flushes.
      const timer = setTimeout(() => this.flush(), this.#windowMs);
      Deno.unrefTimer(timer);
      this.#timer = timer;
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

/**
 * For a `NotCapable` error (app code used a permission the server was not granted), what to
 * add to deno.json, from Deno's message; `undefined` for any other error.
 *
 * @example
 * permissionHint(new Deno.errors.NotCapable(
 *   'Requires env access to "ACC_X", run again with the --allow-env flag',
 * )); // 'no env access to "ACC_X": add "ACC_X" to permissions.app.env in deno.json'
 */
export function permissionHint(error: unknown): string | undefined {
  try {
    if (!(error instanceof Deno.errors.NotCapable)) return undefined;
    const [, kind, value] = /^Requires (net|env|read) access to "(.*)", run again/s
      .exec(error.message) ?? [];
    if (kind === undefined) return undefined;
    const quoted = oneEntry(JSON.stringify(value));
    return `no ${kind} access to ${quoted}: add ${quoted} to permissions.app.${kind} in deno.json`;
  } catch {
    return undefined;
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
 * Text that reads as one entry: control and format characters (a terminal's escapes, a
 * carriage return, a byte-order mark, bidi overrides, line separators) written as `\xNN` or
 * `\u{N}`, and every line that does not start with a space or a tab indented, so a client's
 * input in a message can neither restyle the terminal nor pass for an entry. Cut first, so the
 * escaping stays within the entry's size.
 */
function oneEntry(text: string): string {
  const kept = text.slice(0, MAX_ENTRY_CHARS);
  const safe = kept.replace(UNSAFE, (c) => {
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  }).replace(/\n(?![ \t])/g, "\n  ");
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
