/**
 * Deadlines that all lie the same time after their start, so they pass in the order they were
 * set: one timer, armed for the oldest, does the work of a setTimeout/clearTimeout pair per
 * envelope (that pair costs about 3 µs in Deno 2.9, a tenth of the tunnel's own work on a small
 * envelope).
 *
 * A linked list (server/linked_list.ts), not a Map: V8 gives a long-lived Map a new table every
 * few additions and deletions, in the old generation, and each such table, dead or not, kept the
 * transfers it had held alive until the next full collection. With a Map here the tunnel's heap
 * grew about twice as fast under load, with three times the full collections (BENCHMARKS.md,
 * round 12).
 */
import { type Linked, LinkedList } from "../linked_list.ts";

/** An item's place in the list, handed back by {@link Deadlines.add}. */
export interface Deadline<T> extends Linked<Deadline<T>> {
  readonly item: T;
  readonly at: number;
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
  const running = new LinkedList<Deadline<T>>();
  let timer: ReturnType<typeof setTimeout> | undefined;

  const arm = (ms: number) => timer = setTimeout(fire, Math.ceil(ms));
  function fire() {
    timer = undefined;
    const at = now();
    for (let oldest = running.oldest; oldest !== undefined; oldest = running.oldest) {
      if (oldest.at > at) {
        arm(oldest.at - at);
        return;
      }
      running.remove(oldest);
      expire(oldest.item);
    }
  }

  return {
    add(item) {
      const deadline: Deadline<T> = {
        item,
        at: now() + timeoutMs,
        older: undefined,
        newer: undefined,
        listed: false,
      };
      running.append(deadline);
      if (timer === undefined) arm(timeoutMs);
      return deadline;
    },
    remove(deadline) {
      running.remove(deadline);
      // No timer outlives the last deadline: an idle tunnel holds no timers.
      if (running.size === 0 && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
    },
    get size() {
      return running.size;
    },
  };
}
