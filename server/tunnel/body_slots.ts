/**
 * How many large request bodies stream through the tunnel at once. Each one in flight holds
 * Deno's read buffers, the upstream request's and V8's garbage from both (a few MB under load);
 * past the limit an upload waits for a slot with its body unread, so the kernel's socket
 * buffers hold it instead of the heap. Waiting counts against the tunnel's timeout.
 */
import { type Transfer, TransferStopped } from "./body.ts";

interface Waiter {
  readonly resolve: () => void;
  /** Set once the waiter stopped waiting (timeout): its turn is skipped. */
  gone: boolean;
}

/** A counting semaphore for large bodies, waited on through a {@link Transfer}. */
export class BodySlots {
  #free: number;
  #queue: Waiter[] = [];
  #head = 0;
  /** Slots taken now, for tests and the benchmark. */
  inUse = 0;

  constructor(readonly limit: number) {
    this.#free = limit;
  }

  /**
   * Take a slot for `t`, waiting if none is free; throws {@link TransferStopped} if the
   * transfer is stopped (timeout) while it waits. Every successful take needs one `release()`.
   */
  async take(t: Transfer): Promise<void> {
    if (t.cause !== undefined) throw new TransferStopped();
    if (this.#free > 0) {
      this.#free--;
      this.inUse++;
      return;
    }
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const waiter: Waiter = { resolve, gone: false };
    this.#queue.push(waiter);
    t.wake = (error) => {
      waiter.gone = true;
      reject(error);
    };
    try {
      await promise;
    } finally {
      t.wake = undefined;
    }
    this.inUse++;
  }

  /** Give a slot back: the longest waiter still waiting gets it. */
  release(): void {
    this.inUse--;
    while (this.#head < this.#queue.length) {
      const waiter = this.#queue[this.#head++];
      if (waiter.gone) continue;
      waiter.gone = true;
      waiter.resolve();
      // Drop the turns already taken, now and then, so the queue never holds them all.
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#head);
        this.#head = 0;
      }
      return;
    }
    this.#queue = [];
    this.#head = 0;
    this.#free++;
  }
}
