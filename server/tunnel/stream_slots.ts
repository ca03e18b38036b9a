/**
 * How many large request bodies stream through the tunnel at once. Each one in flight holds
 * Deno's read buffers, the upstream request's and V8's garbage from both (a few MB under load);
 * past the limit an upload waits its turn with its body unread, so the kernel's socket buffers
 * hold it instead of the heap.
 */

/** One upload's place: `ready` once it holds a slot; `release()` gives the slot back (or leaves the line). */
export interface Slot {
  readonly ready: Promise<void>;
  release(): void;
}

/**
 * A counting semaphore: `take()` a slot, first come first served.
 *
 * @example
 * const take = createStreamSlots(8);
 * const slot = take();
 * try { await slot.ready; stream(); } finally { slot.release(); }
 */
export function createStreamSlots(limit: number): () => Slot {
  let free = limit;
  // In arrival order (a Set keeps insertion order); an upload that stops waiting leaves it.
  const line = new Set<() => void>();
  return () => {
    const { promise, resolve } = Promise.withResolvers<void>();
    let state: "waiting" | "holding" | "released" = "waiting";
    const grant = () => {
      state = "holding";
      resolve();
    };
    if (free > 0) {
      free--;
      grant();
    } else {
      line.add(grant);
    }
    return {
      ready: promise,
      release() {
        if (state === "waiting") line.delete(grant);
        if (state === "holding") {
          const next = line.values().next();
          if (next.done) free++;
          else {
            line.delete(next.value);
            next.value();
          }
        }
        state = "released";
      },
    };
  };
}
