/**
 * The wall-clock time at which `performance.now()` read 0, for the request log: a record keeps
 * one `performance.now()` reading (the request path reads one clock, not two: a reading cost
 * about 0.14 µs of a `GET /` in a profile), and its batch turns it into wall-clock time.
 *
 * `performance.timeOrigin` is exact, but fixed at start-up, while the wall clock can be set or
 * drift since, and a log's times must agree with other systems'. `Date.now()` follows the wall
 * clock but in whole milliseconds: an origin taken from one reading of it put 14% of lines a
 * millisecond early. So the origin is learnt: each reading of `Date.now()`, bracketed by two of
 * `performance.now()`, bounds the offset between the two clocks to a window under a millisecond
 * wide; the windows of successive readings narrow it, and a reading outside it (the wall clock
 * was set, or has drifted) starts again from that reading's own window.
 */

// Readings more than this far apart say too little (the thread was paused between them).
const MAX_GAP_MS = 0.25;
// The two clocks may disagree by a few microseconds even when neither moved.
const SLACK_MS = 0.05;

/** The offset of the wall clock from `performance.timeOrigin`, learnt from readings. */
export class ClockOrigin {
  readonly #exact: number;
  // The offset is known to lie in [#low, #high]; it starts at 0, where the origins agree.
  #low = 0;
  #high = 0;

  constructor(exact: number = performance.timeOrigin) {
    this.#exact = exact;
  }

  /**
   * Take one reading: `wall` from `Date.now()`, `before` and `after` from `performance.now()`
   * just before and after it.
   *
   * @example
   * const before = performance.now(), wall = Date.now(), after = performance.now();
   * clock.observe(before, wall, after);
   */
  observe(before: number, wall: number, after: number): void {
    if (after - before > MAX_GAP_MS) return;
    // The wall clock read `wall` at some moment in [wall, wall + 1) of its own time, and that
    // moment lies between `before` and `after` on the other clock.
    const low = wall - (this.#exact + after);
    const high = wall + 1 - (this.#exact + before);
    if (low <= this.#high + SLACK_MS && high >= this.#low - SLACK_MS) {
      this.#low = Math.max(this.#low, Math.min(low, this.#high));
      this.#high = Math.min(this.#high, Math.max(high, this.#low));
    } else {
      this.#low = low;
      this.#high = high;
    }
  }

  /** The wall-clock time, in ms since the epoch, at which `performance.now()` read 0. */
  get origin(): number {
    return this.#exact + (this.#low + this.#high) / 2;
  }
}

const shared = new ClockOrigin();

/** The origin as of now, after one more reading of both clocks. */
export function clockOrigin(): number {
  const before = performance.now();
  const wall = Date.now();
  const after = performance.now();
  shared.observe(before, wall, after);
  return shared.origin;
}
