/** A token bucket per key (a client address, or one for the server's trace budget), in a table of
 * bounded size; the caller passes the clock. */
import { ipBytes, parseIp } from "./http/client_address.ts";

/** The default table size: about 1 MB of state, however many addresses a flood comes from. */
export const MAX_RATE_LIMIT_CLIENTS = 10_000;

/** Entries weighed to make room in a full table: a few, so each take does bounded work. */
const EVICTION_SAMPLE = 4;

/** `limit` envelopes per client per window (also the burst). A full table forgets, of the few
 * least recently seen clients, the one with the most tokens left, and moves the others to the
 * back: a flood of new addresses only resets light budgets, never a client being limited. */
export function createRateLimiter(
  { limit, windowMs = 60_000, maxClients = MAX_RATE_LIMIT_CLIENTS }: {
    readonly limit: number;
    readonly windowMs?: number;
    readonly maxClients?: number;
  },
) {
  const perMs = limit / windowMs;
  const buckets = new Map<string, { tokens: number; atMs: number }>();
  // A clock that steps back must not mint tokens or push the refill into the future.
  const refill = (bucket: { tokens: number; atMs: number }, nowMs: number) => {
    bucket.tokens = Math.min(limit, bucket.tokens + Math.max(0, nowMs - bucket.atMs) * perMs);
    bucket.atMs = Math.max(bucket.atMs, nowMs);
    return bucket.tokens;
  };
  const evict = (nowMs: number) => {
    const oldest = buckets.entries().take(EVICTION_SAMPLE).toArray();
    const [lightest] = oldest.reduce((a, b) => refill(b[1], nowMs) > refill(a[1], nowMs) ? b : a);
    for (const [key, bucket] of oldest) {
      buckets.delete(key);
      if (key !== lightest) buckets.set(key, bucket);
    }
  };
  return {
    /** Spend one envelope of `key`'s budget at `nowMs` (any monotonic clock): go ahead, or wait
     * this many whole seconds. */
    take(key: string, nowMs: number) {
      const bucket = buckets.get(key) ?? { tokens: limit, atMs: nowMs };
      buckets.delete(key);
      if (buckets.size >= Math.max(1, maxClients)) evict(nowMs);
      buckets.set(key, bucket);
      if (refill(bucket, nowMs) >= 1) {
        bucket.tokens -= 1;
        return { allowed: true } as const;
      }
      const wait = Math.ceil((1 - bucket.tokens) / perMs / 1000);
      return { allowed: false, retryAfterSeconds: Math.max(1, wait) } as const;
    },
    get size() {
      return buckets.size;
    },
  };
}

/** The rate-limit key: IPv6 by its /64 (one host often holds a whole /64 to rotate through),
 * an IPv4-mapped IPv6 as its IPv4, anything else as is. */
export function clientKey(address: string): string {
  const ip = parseIp(address.replace(/^\[|\]$/g, "").replace(/%.*$/, ""));
  if (ip === null || !ip.includes(":")) return ip ?? address;
  const bytes = ipBytes(ip);
  const groups = [0, 2, 4, 6].map((i) => ((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return `${groups.join(":")}::/64`;
}
