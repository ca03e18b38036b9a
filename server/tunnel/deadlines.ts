/**
 * Deadlines that all lie the same time after their start, so they pass in the order they were
 * set: one timer, armed for the oldest, does the work of a setTimeout/clearTimeout pair per
 * envelope (that pair costs about 3 µs in Deno 2.9, a tenth of the tunnel's own work on a small
 * envelope).
 *
 * A linked list, not a Map: V8 gives a long-lived Map a new table every few additions and
 * deletions, in the old generation (server/pending_promises.ts), and each such table, dead or
 * not, kept the transfers it had held alive until the next full collection: with a Map here the
 * tunnel's heap grew about twice as fast under load, with three times the full collections
 * (BENCHMARKS.md, round 12). An entry leaves the list with its links cleared, so a dead entry
 * points at nothing.
 */

/** An item's place in the list, handed back by {@link Deadlines.add}. */
export interface Deadline<T> {
  readonly item: T;
  readonly at: number;
  older: Deadline<T> | undefined;
  newer: Deadline<T> | undefined;
  listed: boolean;
}

/** Deadlines of one length, each removed when its item is done or expired when it passes. */
export interface Deadlines<T> {
  /** Start `item`'s deadline now; pass what this returns to {@link remove} when it is done. */
  add(item: T): Deadline<T>;
  /** The item is done: its deadline no longer matters. Removing twice changes nothing. */
  remove(deadline: Deadline<T>): void;
  /** Deadlines running now. */
  readonly size: number;
}

/**
 * Deadlines `timeoutMs` after each `add`, on a monotonic clock (milliseconds); `expire` is called
 * for each item whose deadline passed, oldest first, after it left the list. No timer runs while
 * the list is empty.
 *
 * @example
 * const deadlines = createDeadlines(30_000, (t) => stopTransfer(t, "timeout"));
 * const deadline = deadlines.add(t);
 * try { await forward(t); } finally { deadlines.remove(deadline); }
 */
export function createDeadlines<T>(
  timeoutMs: number,
  expire: (item: T) => void,
  now: () => number = () => performance.now(),
): Deadlines<T> {
  let oldest: Deadline<T> | undefined;
  let newest: Deadline<T> | undefined;
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const unlink = (deadline: Deadline<T>) => {
    if (!deadline.listed) return;
    const { older, newer } = deadline;
    if (older === undefined) oldest = newer;
    else older.newer = newer;
    if (newer === undefined) newest = older;
    else newer.older = older;
    deadline.older = deadline.newer = undefined;
    deadline.listed = false;
    size--;
  };
  const arm = (ms: number) => timer = setTimeout(fire, Math.ceil(ms));
  function fire() {
    timer = undefined;
    const at = now();
    while (oldest !== undefined) {
      if (oldest.at > at) {
        arm(oldest.at - at);
        return;
      }
      const passed = oldest;
      unlink(passed);
      expire(passed.item);
    }
  }

  return {
    add(item) {
      const deadline: Deadline<T> = {
        item,
        at: now() + timeoutMs,
        older: newest,
        newer: undefined,
        listed: true,
      };
      if (newest === undefined) oldest = deadline;
      else newest.newer = deadline;
      newest = deadline;
      size++;
      if (timer === undefined) arm(timeoutMs);
      return deadline;
    },
    remove(deadline) {
      unlink(deadline);
      // No timer outlives the last deadline: an idle tunnel holds no timers.
      if (size === 0 && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
    },
    get size() {
      return size;
    },
  };
}
