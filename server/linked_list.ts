/**
 * An intrusive doubly linked list, oldest to newest: the links live on the entries themselves,
 * so adding, removing and moving an entry allocate nothing. For what a long-lived Map in recency
 * or deadline order would otherwise hold: V8 gives such a Map a new table every few additions and
 * deletions, made in the old generation, and a dead table there keeps what it held alive until
 * the next full collection. An entry leaves with its links cleared,
 * so a dead entry points at nothing either.
 */

/** The links an entry carries; start them as `undefined`, `undefined`, `false`. */
export interface Linked<N> {
  older: N | undefined;
  newer: N | undefined;
  listed: boolean;
}

/** Entries in the order they were appended (or last moved to the newest end). */
export class LinkedList<N extends Linked<N>> {
  #oldest: N | undefined;
  #newest: N | undefined;
  #size = 0;

  /** Entries listed. */
  get size(): number {
    return this.#size;
  }

  /** The entry appended longest ago, if any. */
  get oldest(): N | undefined {
    return this.#oldest;
  }

  /** Add an entry that is not listed as the newest. */
  append(entry: N): void {
    if (entry.listed) return;
    entry.older = this.#newest;
    entry.newer = undefined;
    if (this.#newest === undefined) this.#oldest = entry;
    else this.#newest.newer = entry;
    this.#newest = entry;
    entry.listed = true;
    this.#size++;
  }

  /** Take an entry out, clearing its links; one that is not listed is left as it is. */
  remove(entry: N): void {
    if (!entry.listed) return;
    const { older, newer } = entry;
    if (older === undefined) this.#oldest = newer;
    else older.newer = newer;
    if (newer === undefined) this.#newest = older;
    else newer.older = older;
    entry.older = entry.newer = undefined;
    entry.listed = false;
    this.#size--;
  }

  /** Make a listed entry the newest (recency order). */
  moveToNewest(entry: N): void {
    if (entry === this.#newest) return;
    this.remove(entry);
    this.append(entry);
  }
}
