/** What request bodies in flight may hold, the tunnel's and `ctx.json()`'s together: places (bodies
 * being read) and bytes, per client and overall. Bytes cost memory, an idle socket does not: a
 * newcomer pushes out a stalled body rather than be refused behind it. */

/** The settings' defaults. `readTimeoutMs` between reads (nginx's client_body_timeout): an uplink
 * stalls for seconds, nginx's 60 s would let a socket hold its place a minute a byte. `minRate`
 * bytes/s on average once past the grace, half the read timeout (TCP's slow start): 64 kbit/s, a
 * 1.5 Mbit/s uplink sends 23 times it. `memoryBytes` held by all bodies, half by one client while
 * per-client limits are on: 3 bodies at the tunnel's 20 MiB cap, a client's half one. */
export const BODY_DEFAULTS = { readTimeoutMs: 10_000, minRate: 8 * 1024, memoryBytes: 64 << 20 };

/** The budget's settings (see BODY_DEFAULTS); `clientLimits` is TUNNEL_RATE_LIMIT on. */
export type BodyLimits = typeof BODY_DEFAULTS & { readonly clientLimits: boolean };

/** Bodies read at once, as Relay's max_concurrent_requests: a waiting read holds 64 KiB. */
export const MAX_BODIES = 100;
/** A browser opens 6 connections per origin: 8 leave a tab room, and 12 clients fill the 100. */
export const MAX_CLIENT_BODIES = 8;
/** A body this far behind the minimum rate is stalled, not starting: a newcomer may push it out. */
export const STALLED_MS = 1_000;
/** The Retry-After of a 503: stalled bodies are cut within the grace. */
export const RETRY_AFTER_SECONDS = 5;

/** One body's share: when it began to be read, the bytes it received and was charged. */
export interface Place {
  readonly client: { readonly key: string; readonly places: Set<Place>; bytes: number };
  readonly stall: () => void;
  readonly start: number;
  received: number;
  charged: number;
  /** Read to its end (its wait is the app's or the ingest's): never stalled. */
  ended?: boolean;
}

/** The budget shared by every body of the server. */
export type BodyBudget = ReturnType<typeof createBodyBudget>;

/** Build a budget; `clock` gives the time in ms. */
export function createBodyBudget(limits: BodyLimits, clock = () => performance.now()) {
  const { memoryBytes, minRate, readTimeoutMs } = limits;
  const clientPlaces = limits.clientLimits ? MAX_CLIENT_BODIES : MAX_BODIES;
  const clientBytes = limits.clientLimits ? memoryBytes / 2 : memoryBytes;
  const admitted = new Set<Place>();
  const clients = new Map<string, Place["client"]>();
  let bytes = 0;
  const leave = (place: Place) => {
    if (!admitted.delete(place)) return;
    const { client } = place;
    client.places.delete(place);
    client.bytes -= place.charged;
    bytes -= place.charged;
    if (client.places.size === 0) clients.delete(client.key);
  };
  // Ends the most stalled of `among` (at most MAX_BODIES looked at); false if none is stalled.
  const pushOut = (among: Iterable<Place>): boolean => {
    const now = clock();
    let victim: Place | undefined;
    let most = STALLED_MS;
    for (const place of among) {
      const lag = now - place.start - place.received * 1000 / minRate;
      if (!place.ended && lag > most) [victim, most] = [place, lag];
    }
    if (victim === undefined) return false;
    leave(victim);
    victim.stall();
    return true;
  };

  return {
    limits,
    clock,
    /** A place for a body of client `key` reserving `need` bytes (its length), else undefined
     * (503): its client's share or the whole is taken, with no stalled body to push out. */
    enter(key: string, need: number, stall: () => void): Place | undefined {
      const client = clients.get(key) ?? { key, places: new Set(), bytes: 0 };
      while (client.places.size >= clientPlaces || client.bytes + need > clientBytes) {
        if (!pushOut(client.places)) return undefined;
      }
      while (admitted.size >= MAX_BODIES || bytes + need > memoryBytes) {
        if (!pushOut(admitted)) return undefined;
      }
      const place: Place = { client, stall, start: clock(), received: 0, charged: need };
      clients.set(key, client);
      client.places.add(place);
      admitted.add(place);
      client.bytes += need;
      bytes += need;
      return place;
    },
    /** Count `n` bytes received; false (503) if, beyond what was reserved, they do not fit. */
    receive(place: Place, n: number): boolean {
      if (!admitted.has(place)) return false;
      const extra = (place.received += n) - place.charged;
      if (extra <= 0) return true;
      const { client } = place;
      if (client.bytes + extra > clientBytes || bytes + extra > memoryBytes) return false;
      [place.charged, client.bytes, bytes] = [place.received, client.bytes + extra, bytes + extra];
      return true;
    },
    /** The body is over: its place and bytes are free. */
    leave,
    /** When the body in `place` must end (408): `readTimeoutMs` after a read began to `wait`
     * (null: none waits), or once `got` bytes are behind `minRate` past the grace, as Apache's
     * mod_reqtimeout MinRate. */
    deadline(place: Place, got: number, wait: number | null): number {
      const behind = place.start + readTimeoutMs / 2 + got * 1000 / minRate;
      return wait === null ? behind : Math.min(behind, wait + readTimeoutMs);
    },
  };
}

/** The answer to a body the budget stopped: "timeout" (behind its pace, 408) or "busy" (no room,
 * 503); else undefined. */
export function refusedBody(cause: string | undefined, limits: BodyLimits) {
  const pace = `nothing for ${limits.readTimeoutMs} ms, or under ${limits.minRate} bytes/s`;
  if (cause === "timeout") return { status: 408, reason: `request body too slow: ${pace}` };
  if (cause !== "busy") return undefined;
  const headers = { "retry-after": String(RETRY_AFTER_SECONDS) };
  return { status: 503, reason: "too many request bodies in flight; retry later", headers };
}
