/** Slots for request bodies being read (each holds read buffers): past the limit a body waits
 * unread, in the kernel's socket buffers rather than the server's memory. */

/** How many of `limit` slots one client may hold: half while per-client limits are on (one address
 * cannot take them all, a NAT's clients keep some concurrency), else all. */
export function clientShare(limit: number, clientLimits: boolean): number {
  return clientLimits ? Math.max(1, limit >> 1) : limit;
}

/** A semaphore of `limit` slots. A client (`key`) holds at most `perClient`, so a few idle uploads
 * cannot keep everyone's out; its others wait in its own line, and a freed slot goes to the next
 * line, in turn, whose client may take one. `release()` frees the slot or leaves the line. */
export function createBodySlots(limit: number, perClient = limit) {
  let free = limit;
  const held = new Map<string, number>();
  const lines = new Map<string, Set<() => void>>(); // per client, clients in arrival order
  const hold = (key: string, n: number) => n === 0 ? held.delete(key) : held.set(key, n);
  const leave = (key: string, grant: () => void) => {
    if (lines.get(key)?.delete(grant) && lines.get(key)!.size === 0) lines.delete(key);
  };
  return (key = "") => {
    const { promise, resolve } = Promise.withResolvers<void>();
    let holding = false;
    const grant = () => {
      holding = true;
      hold(key, (held.get(key) ?? 0) + 1);
      resolve();
    };
    if (free > 0 && (held.get(key) ?? 0) < perClient) {
      free--;
      grant();
    } else lines.set(key, (lines.get(key) ?? new Set()).add(grant));
    return {
      ready: promise,
      release() {
        if (!holding) return leave(key, grant);
        holding = false;
        hold(key, held.get(key)! - 1);
        // At most limit / perClient clients are at their share: the loop skips no more than those.
        for (const [client, line] of lines) {
          if ((held.get(client) ?? 0) >= perClient) continue;
          const [next] = line;
          leave(client, next);
          if (lines.delete(client)) lines.set(client, line); // its line goes last: round robin
          return next();
        }
        free++;
      },
    };
  };
}
