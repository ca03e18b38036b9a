/**
 * A per-client envelope budget for the tunnel: a token bucket per client address, kept in a
 * table of fixed size. Pure: the caller passes the clock, so tests need no sockets or sleeps.
 */
/** The answer for one envelope: go ahead, or wait this many whole seconds. */
export type RateDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/** Envelopes per client per window, with a bounded table of clients. */
export interface RateLimiter {
  /** Spend one envelope of `key`'s budget at time `nowMs` (any monotonic clock). */
  take(key: string, nowMs: number): RateDecision;
  /** How many clients the table holds (never more than `maxClients`). */
  readonly size: number;
}

/** How a {@link RateLimiter} is sized. */
export interface RateLimitOptions {
  /** Envelopes allowed per client per window; also the burst a quiet client may send at once. */
  readonly limit: number;
  /** Window length; the budget refills evenly over it. */
  readonly windowMs?: number;
  /** Most clients tracked at once; past it the least recently seen is forgotten. */
  readonly maxClients?: number;
}

/** The default table size: about 1 MB of state, however many addresses a flood comes from. */
export const MAX_RATE_LIMIT_CLIENTS = 10_000;

const ALLOWED: RateDecision = { allowed: true };

interface Bucket {
  tokens: number;
  atMs: number;
}

/**
 * Build a limiter. When the table is full the least recently seen client is dropped: an idle
 * client's bucket is full anyway, so forgetting it loses nothing, and a flood from many
 * addresses can at worst reset budgets, never refuse everyone or grow memory.
 *
 * @example
 * const limiter = createRateLimiter({ limit: 600 });
 * if (!limiter.take(clientKey(ip), performance.now()).allowed) return tooMany();
 */
export function createRateLimiter(options: RateLimitOptions): RateLimiter {
  const { limit } = options;
  const windowMs = options.windowMs ?? 60_000;
  const maxClients = Math.max(1, options.maxClients ?? MAX_RATE_LIMIT_CLIENTS);
  const perMs = limit / windowMs;
  // In recency order, least recent first: a client seen again is deleted and added anew.
  const buckets = new Map<string, Bucket>();
  return {
    take(key, nowMs) {
      const bucket = buckets.get(key);
      if (bucket === undefined) {
        if (buckets.size >= maxClients) buckets.delete(buckets.keys().next().value!);
        buckets.set(key, { tokens: limit - 1, atMs: nowMs });
        return ALLOWED;
      }
      buckets.delete(key);
      buckets.set(key, bucket);
      // A clock that steps back must not mint tokens or push the refill into the future.
      const elapsed = Math.max(0, nowMs - bucket.atMs);
      bucket.tokens = Math.min(limit, bucket.tokens + elapsed * perMs);
      bucket.atMs = Math.max(bucket.atMs, nowMs);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return ALLOWED;
      }
      return {
        allowed: false,
        retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)),
      };
    },
    get size() {
      return buckets.size;
    },
  };
}

/**
 * The rate-limit key of a client address: IPv4 as is, IPv6 by its /64 network (one host
 * usually holds a whole /64 and could rotate through it), anything else as is.
 *
 * @example
 * clientKey("2001:db8:1:2:aaaa::1"); // "2001:db8:1:2::/64"
 */
export function clientKey(address: string): string {
  if (!address.includes(":")) return address;
  const groups = expandIpv6(address);
  if (groups === null) return address;
  // An IPv4-mapped address (::ffff:a.b.c.d) is an IPv4 client.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6] >> 8, groups[6] & 255, groups[7] >> 8, groups[7] & 255].join(".");
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(":")}::/64`;
}

/** Eight 16-bit groups, or null when `text` is not an IPv6 address. */
function expandIpv6(text: string): number[] | null {
  let address = text.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  // A trailing dotted IPv4 part stands for the last two groups.
  const v4 = /^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (v4 !== null) {
    const octets = v4.slice(2).map(Number);
    if (octets.some((o) => o > 255)) return null;
    address = `${v4[1]}${((octets[0] << 8) | octets[1]).toString(16)}:` +
      ((octets[2] << 8) | octets[3]).toString(16);
  }
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => part === "" ? [] : part.split(":");
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array(missing).fill("0"), ...tail];
  if (!groups.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  return groups.map((g) => parseInt(g, 16));
}
