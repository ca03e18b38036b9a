/** What request bodies in flight may hold, for the tunnel and `ctx.json()` together: places (bodies
 * being read) and bytes, per client and overall. Bytes cost memory, an idle connection does not:
 * a newcomer pushes out a stalled body rather than wait behind it. */

/** The limits of a {@link createBodyBudget}; times in ms, rates in bytes per second. */
export interface BodyLimits {
  /** Longest wait for the next piece of a body (nginx's client_body_timeout). */
  readonly readTimeoutMs: number;
  /** Slowest average rate a body may arrive at, once past half the read timeout (the grace: TCP's
   * slow start, a body read whole in one go). */
  readonly minRate: number;
  /** Bytes all bodies in flight may hold; one client half of it while per-client limits are on. */
  readonly memoryBytes: number;
  /** Per-client places and bytes (TUNNEL_RATE_LIMIT on); off, one client may take all. */
  readonly clientLimits: boolean;
}

/** The settings' defaults. 10 s between reads: a phone's uplink stalls for seconds, nginx's 60 s
 * would let a socket hold its place a minute a byte. 8 KiB/s is 64 kbit/s: a 1.5 Mbit/s uplink has
 * 23 times it, a 2 bytes a second trickle is cut after the grace. 64 MiB: 3 bodies at the tunnel's
 * 20 MiB cap, a client's half holds one. */
export const BODY_DEFAULTS = { readTimeoutMs: 10_000, minRate: 8 * 1024, memoryBytes: 64 << 20 };

/** Bodies read at once, Relay's max_concurrent_requests: each waiting read holds a 64 KiB buffer. */
export const MAX_BODIES = 100;
/** A browser opens at most 6 connections per origin: 8 leave a tab room, and 12 clients the rest. */
export const MAX_CLIENT_BODIES = 8;
/** A body this far behind the minimum rate is stalled, not starting: a newcomer may push it out. */
export const STALLED_MS = 1_000;
/** Longest wait for a place or memory (then 503), and the Retry-After then: stalled bodies are
 * cut within the grace. */
export const BODY_WAIT_MS = 10_000;
export const RETRY_AFTER_SECONDS = 5;

/** One body's share: its client, when it began to be read, what it received and was charged. */
export interface Place {
  readonly key: string;
  start: number;
  received: number;
  charged: number;
  /** Ends the body as too slow (a newcomer took its place). */
  readonly stall: () => void;
}

/** When a body must end (408): `readTimeoutMs` after a read began waiting (`waiting`, null when
 * none does), or once `credited` bytes are behind `minRate` past the grace, as Apache's
 * mod_reqtimeout MinRate. */
export function bodyDeadline(
  limits: BodyLimits,
  start: number,
  credited: number,
  waiting: number | null,
): number {
  const behind = start + limits.readTimeoutMs / 2 + credited * 1000 / limits.minRate;
  return waiting === null ? behind : Math.min(behind, waiting + limits.readTimeoutMs);
}

/** The budget shared by every body of the server. */
export type BodyBudget = ReturnType<typeof createBodyBudget>;

/** Build a budget; `clock` gives the time in ms. */
export function createBodyBudget(limits: BodyLimits, clock = () => performance.now()) {
  const clientBodies = limits.clientLimits ? MAX_CLIENT_BODIES : MAX_BODIES;
  const clientBytes = limits.clientLimits ? limits.memoryBytes / 2 : limits.memoryBytes;
  const admitted = new Set<Place>();
  const waiting = new Map<Place, () => void>(); // in arrival order
  const clients = new Map<string, Set<Place>>(); // admitted and waiting
  const clientCharge = new Map<string, number>();
  let bytes = 0;
  const fits = (need: number) => admitted.size < MAX_BODIES && bytes + need <= limits.memoryBytes;
  const charge = (place: Place, n: number) => {
    place.charged += n;
    clientCharge.set(place.key, (clientCharge.get(place.key) ?? 0) + n);
    if (admitted.has(place)) bytes += n;
  };
  const admit = (place: Place) => {
    admitted.add(place);
    bytes += place.charged;
    place.start = clock();
  };
  const leave = (place: Place) => {
    const mine = clients.get(place.key);
    if (!mine?.delete(place)) return;
    clientCharge.set(place.key, clientCharge.get(place.key)! - place.charged);
    if (mine.size === 0) [clients, clientCharge].forEach((map) => map.delete(place.key));
    if (admitted.delete(place)) bytes -= place.charged;
    waiting.delete(place);
    // Each waiter is granted or leaves once: the work is linear in the bodies.
    for (const [next, grant] of waiting) {
      if (!fits(next.charged)) break;
      waiting.delete(next);
      admit(next);
      grant();
    }
  };
  // Ends the most stalled of `among` (at most MAX_BODIES looked at); false if none is stalled.
  const pushOut = (among: Iterable<Place>): boolean => {
    const now = clock();
    let victim: Place | undefined;
    let most = STALLED_MS;
    for (const place of among) {
      const lag = now - place.start - place.received * 1000 / limits.minRate;
      if (admitted.has(place) && lag > most) [victim, most] = [place, lag];
    }
    if (victim === undefined) return false;
    leave(victim);
    victim.stall();
    return true;
  };

  return {
    limits,
    clock,
    /** A place for a body of client `key` reserving `need` bytes: `ready` resolves once it may be
     * read; undefined (503) when its client is at its share with nothing stalled to push out. */
    enter(key: string, need: number, stall: () => void) {
      const place: Place = { key, start: clock(), received: 0, charged: 0, stall };
      const mine = clients.get(key) ?? new Set();
      const over = () =>
        mine.size >= clientBodies || (clientCharge.get(key) ?? 0) + need > clientBytes;
      while (over()) if (!pushOut(mine)) return undefined;
      while (waiting.size === 0 && !fits(need) && pushOut(admitted));
      clients.set(key, mine.add(place));
      charge(place, need);
      if (waiting.size === 0 && fits(need)) return admit(place), { place, ready: undefined };
      const ready = new Promise<void>((resolve) => waiting.set(place, resolve));
      return { place, ready };
    },
    /** Count `n` more bytes received; false (503) if beyond what was reserved they do not fit. */
    receive(place: Place, n: number): boolean {
      place.received += n;
      const extra = place.received - place.charged;
      if (extra <= 0) return true;
      const over = (clientCharge.get(place.key) ?? 0) + extra > clientBytes;
      if (!admitted.has(place) || over || bytes + extra > limits.memoryBytes) return false;
      charge(place, extra);
      return true;
    },
    /** The body is over (or left its line): its place and bytes go to the next in line. */
    leave,
  };
}

/** The answer to a body the budget stopped ("slow": 408; "busy": 503 with Retry-After); else
 * undefined. */
export function refusedBody(cause: string | undefined, limits: BodyLimits) {
  const pace = `nothing for ${limits.readTimeoutMs} ms, or under ${limits.minRate} bytes/s`;
  if (cause === "slow") return { status: 408, reason: `request body too slow: ${pace}` };
  if (cause !== "busy") return undefined;
  const headers = { "retry-after": String(RETRY_AFTER_SECONDS) };
  return { status: 503, reason: "too many request bodies in flight; retry later", headers };
}
