/**
 * Items collected and handed over in batches: when a batch is full, or when the first item has
 * waited long enough. The request log writes its lines so, and monitoring builds its
 * transactions so. Work done for a batch in one loop runs warm; the same code run once between
 * requests ran several times slower (see request_log.ts and monitoring/sentry.ts).
 */

/** Options of a {@link BatchQueue}. */
export interface BatchQueueOptions {
  /** How long the first queued item waits for others. */
  readonly waitMs: number;
  /** A batch this large goes at once. */
  readonly maxBatch: number;
}

/** Collects items and hands them to `send` in batches, in the order they came. */
export class BatchQueue<T> {
  #items: T[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #send: (items: readonly T[]) => void;
  readonly #options: BatchQueueOptions;

  constructor(send: (items: readonly T[]) => void, options: BatchQueueOptions) {
    this.#send = send;
    this.#options = options;
  }

  /** Items waiting. */
  get size(): number {
    return this.#items.length;
  }

  /**
   * Queue one item; a full batch is sent at once, otherwise within the wait. A full batch leaves
   * the wait's timer running, for the items after it: under load batches fill every millisecond
   * or two, and a timer armed and cleared for each cost more than the batch saved (a timer
   * is about 3 µs in Deno 2.9 in a loop, and far more run once between requests).
   */
  push(item: T): void {
    this.#items.push(item);
    if (this.#items.length >= this.#options.maxBatch) this.#take();
    else this.#timer ??= setTimeout(this.#waited, this.#options.waitMs);
  }

  /** Send everything queued now (a flush, or shutdown), and stop the wait's timer. */
  drain(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#take();
  }

  readonly #waited = () => {
    this.#timer = undefined;
    this.#take();
  };

  #take(): void {
    if (this.#items.length === 0) return;
    const items = this.#items;
    this.#items = [];
    this.#send(items);
  }
}
