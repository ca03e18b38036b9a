/** A token bucket per key (a client address, or one for the server's trace budget), in a table of
 * bounded size; the caller passes the clock. */

/** Go ahead, or wait this many whole seconds. */
export type RateDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/** The default table size: about 1 MB of state, however many addresses a flood comes from. */
export const MAX_RATE_LIMIT_CLIENTS = 10_000;

/** `limit` envelopes per client per window (also the burst); a full table forgets the least
 * recently seen client, so a flood from many addresses only resets budgets, never refuses all. */
export function createRateLimiter(
  { limit, windowMs = 60_000, maxClients = MAX_RATE_LIMIT_CLIENTS }: {
    readonly limit: number;
    readonly windowMs?: number;
    readonly maxClients?: number;
  },
) {
  const perMs = limit / windowMs;
  const buckets = new Map<string, { tokens: number; atMs: number }>();
  return {
    /** Spend one envelope of `key`'s budget at `nowMs` (any monotonic clock). */
    take(key: string, nowMs: number): RateDecision {
      const bucket = buckets.get(key) ?? { tokens: limit, atMs: nowMs };
      buckets.delete(key);
      if (buckets.size >= Math.max(1, maxClients)) buckets.delete(buckets.keys().next().value!);
      buckets.set(key, bucket);
      // A clock that steps back must not mint tokens or push the refill into the future.
      bucket.tokens = Math.min(limit, bucket.tokens + Math.max(0, nowMs - bucket.atMs) * perMs);
      bucket.atMs = Math.max(bucket.atMs, nowMs);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true };
      }
      const wait = Math.ceil((1 - bucket.tokens) / perMs / 1000);
      return { allowed: false, retryAfterSeconds: Math.max(1, wait) };
    },
    get size() {
      return buckets.size;
    },
  };
}

/** The rate-limit key: IPv6 by its /64 (one host often holds a whole /64 to rotate through),
 * an IPv4-mapped IPv6 as its IPv4, anything else as is. */
export function clientKey(address: string): string {
  if (!address.includes(":")) return address;
  let host: string;
  try {
    // The URL parser validates and canonicalises IPv6 (lower case, a dotted tail in hex).
    const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
    host = new URL(`http://[${bare}]`).hostname.slice(1, -1);
  } catch {
    return address;
  }
  const [head, tail] = host.split("::").map((part) => part ? part.split(":") : []);
  const groups = tail === undefined
    ? head
    : [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail];
  if (groups.slice(0, 5).every((g) => g === "0") && groups[5] === "ffff") {
    const [high, low] = groups.slice(6).map((g) => parseInt(g, 16));
    return [high >> 8, high & 255, low >> 8, low & 255].join(".");
  }
  return `${groups.slice(0, 4).join(":")}::/64`;
}
