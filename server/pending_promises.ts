/**
 * Promises handed over and not settled yet (the server's envelopes on their way to the ingest),
 * counted, with a way to wait for the ones pending at that moment, as a flush does.
 *
 * Counted rather than kept in a Set, for the garbage collector: V8 gives a Set or Map a new table
 * every few additions and deletions, and once its table has been promoted to the old generation
 * (a long-lived Set's has) it makes each new one there too (OrderedHashTable::Rehash), where only
 * the next full collection frees it. One entry per envelope made most of what the server's heap
 * grew by under load (BENCHMARKS.md, round 12).
 */
import { settlesWithin } from "./settles_within.ts";

/** Counts promises until they settle; {@link settled} waits for those pending when it is called. */
export class PendingPromises {
  // Promises still pending, by generation: `#counts[i]` for generation `#first + i`, the last
  // slot for the current one. A wait starts a new generation, so it covers exactly the promises
  // tracked before it; one slot is all there is while nobody waits.
  #counts: number[] = [0];
  #first = 0;
  #pending = 0;
  readonly #waiters: { readonly until: number; readonly wake: () => void }[] = [];

  /** Promises tracked and not settled yet. */
  get count(): number {
    return this.#pending;
  }

  /**
   * Count `promise` until it fulfils or rejects. Its rejection is still its holder's to handle;
   * the handler added here only counts.
   */
  track(promise: PromiseLike<unknown>): void {
    const generation = this.#first + this.#counts.length - 1;
    this.#counts[this.#counts.length - 1]++;
    this.#pending++;
    const settle = () => this.#settle(generation);
    promise.then(settle, settle);
  }

  /**
   * Resolves true once every promise tracked before this call has settled (those tracked after
   * it are not waited for), or false when `timeoutMs` passes first; without a timeout it waits as
   * long as that takes. No timer is left running either way.
   *
   * @example
   * await pending.settled(2_000); // false if some were still pending after 2 s
   */
  settled(timeoutMs?: number): Promise<boolean> {
    if (this.#pending === 0) return Promise.resolve(true);
    const { promise, resolve } = Promise.withResolvers<void>();
    this.#waiters.push({ until: this.#first + this.#counts.length, wake: resolve });
    this.#counts.push(0);
    return timeoutMs === undefined ? promise.then(() => true) : settlesWithin(promise, timeoutMs);
  }

  #settle(generation: number): void {
    this.#pending--;
    this.#counts[generation - this.#first]--;
    // Generations all settled leave the front; the current one always keeps its slot.
    while (this.#counts.length > 1 && this.#counts[0] === 0) {
      this.#counts.shift();
      this.#first++;
    }
    // Every generation before `#first` has settled: so has what a waiter up to it waits for.
    // Waiters came in generation order, so they leave from the front.
    while (this.#waiters.length > 0 && this.#waiters[0].until <= this.#first) {
      this.#waiters.shift()!.wake();
    }
  }
}
