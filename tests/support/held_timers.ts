/**
 * Timers of one length, held: while they are, a `setTimeout` of exactly that many milliseconds
 * does not run on the clock but when the test fires it. For a deadline a test exercises (the
 * tunnel's `timeoutMs`): the test fires it once whatever must come first has come, so neither
 * side of the deadline depends on how fast the machine is. Every other timer runs as usual.
 *
 * @example
 * await using tunnel = startTunnel([dsn], { timeoutMs: HELD_MS });
 * using deadlines = holdTimers(HELD_MS);
 * // ... once the ingest holds the envelope ...
 * deadlines.fire();
 */

/** A length no other timer in the tests uses (11.6 days), for the deadline to hold. */
export const HELD_MS = 999_999_999;

/** The timers held so far. */
export interface HeldTimers extends Disposable {
  /** Held timers neither fired nor cleared yet. */
  readonly pending: number;
  /** Run every pending timer's callback, in the order they were set. */
  fire(): void;
}

/**
 * Hold every `setTimeout(fn, ms)` from now until disposed, which restores the real timers and
 * fires any still held: declare it after what waits on them (a tunnel), so it is disposed first.
 */
export function holdTimers(ms: number): HeldTimers {
  const { setTimeout: realSet, clearTimeout: realClear } = globalThis;
  const held = new Map<number, () => void>();
  // Negative: never the id of a real timer.
  let lastId = 0;
  globalThis.setTimeout = ((callback: unknown, delay?: number, ...args: unknown[]) => {
    if (delay !== ms || typeof callback !== "function") {
      return realSet(callback as () => void, delay, ...args);
    }
    held.set(--lastId, () => callback(...args));
    return lastId;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((id?: number) => {
    if (id === undefined || !held.delete(id)) realClear(id);
  }) as typeof clearTimeout;
  return {
    get pending() {
      return held.size;
    },
    fire() {
      const due = [...held.values()];
      held.clear();
      for (const run of due) run();
    },
    // Whatever is still held fires, so nothing waits forever on a test that failed early.
    [Symbol.dispose]() {
      globalThis.setTimeout = realSet;
      globalThis.clearTimeout = realClear;
      this.fire();
    },
  };
}
