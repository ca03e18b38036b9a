/** What request bodies in flight may hold, the tunnel's and `ctx.json()`'s together: places (bodies
 * being read) and bytes held, per client and overall. A body is charged the bytes it has received,
 * never what it declares; when places or bytes run short, the slowest holder gives way. */
import { FRAGMENTED_REASON } from "./request_body.ts";

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
/** A body's pace is measured over its last 1-2 such windows; a younger body is never pushed out. */
export const RATE_WINDOW_MS = 1_000;
/** A body recently under this many times the minimum rate may be pushed out when places or bytes
 * run short: it would hold them at least half the longest a body may; 1.5 Mbit/s is 23 times. */
export const PUSH_OUT_PACE = 2;
/** The Retry-After of a 503: slow bodies are cut within the grace. */
export const RETRY_AFTER_SECONDS = 5;

/** A body as the budget sees it: stopped when pushed out ("busy") or past when it is `due`
 * ("timeout", ms on the budget's clock). */
export interface Holder {
  stop(cause: "busy" | "timeout"): void;
  due(): number;
}

/** One body's share: its bytes charged (`cost` each), and its pace (what it was charged at two
 * marks). */
export interface Place {
  readonly client: string;
  readonly holder: Holder;
  readonly cost: number;
  readonly start: number;
  charged: number;
  marks: [at: number, charged: number][];
  /** Read to its end (its wait is the app's or the ingest's): never pushed out. */
  ended?: boolean;
}

/** The budget shared by every body of the server. */
export type BodyBudget = ReturnType<typeof createBodyBudget>;

/** Build a budget; `clock` gives the time in ms. */
export function createBodyBudget(limits: BodyLimits, clock = () => performance.now()) {
  const { memoryBytes, minRate, readTimeoutMs } = limits;
  const clientPlaces = limits.clientLimits ? MAX_CLIENT_BODIES : MAX_BODIES;
  const clientBytes = limits.clientLimits ? memoryBytes / 2 : memoryBytes;
  const admitted = new Set<Place>(), clients = new Map<string, Set<Place>>();
  let bytes = 0, sweeper: ReturnType<typeof setInterval> | undefined;
  const of = (client: string) => clients.get(client) ?? new Set<Place>();
  const leave = (place: Place) => {
    if (!admitted.delete(place)) return;
    bytes -= place.charged;
    of(place.client).delete(place);
    if (of(place.client).size === 0) clients.delete(place.client);
    if (admitted.size === 0) sweeper = void clearInterval(sweeper);
  };
  // One timer for all bodies, not one each: it stops those past their deadline, at most a
  // twentieth of the read timeout late (5 ms at least: a tiny BODY_READ_TIMEOUT_MS cannot spin).
  const sweep = () => {
    const now = clock();
    for (const place of admitted) if (place.holder.due() <= now) place.holder.stop("timeout");
  };
  // Pushes out, of `among` (at most MAX_BODIES), the body slower than PUSH_OUT_PACE with the lowest
  // rate for the bytes it holds (for bytes, to make room for `spare`'s: one that holds some).
  const pushOut = (among: Iterable<Place>, spare?: Place): boolean => {
    const now = clock();
    let victim: Place | undefined, worst = 0;
    for (const place of among) {
      if (place === spare || place.ended || now - place.start < RATE_WINDOW_MS) continue;
      const [at, charged] = place.marks[0];
      const rate = (place.charged - charged) / place.cost * 1000 / (now - at);
      if (rate >= PUSH_OUT_PACE * minRate || (spare && place.charged === 0)) continue;
      const score = (place.charged + 1) / (rate + 1);
      if (score > worst) [victim, worst] = [place, score];
    }
    if (victim) leave(victim);
    victim?.holder.stop("busy");
    return victim !== undefined;
  };

  return {
    limits,
    clock,
    /** A place for a body of `client` whose bytes cost `cost` each, else undefined (503): its
     * client's places or all are taken by bodies that keep pace. */
    enter(client: string, holder: Holder, cost = 1): Place | undefined {
      while (of(client).size >= clientPlaces) if (!pushOut(of(client))) return;
      while (admitted.size >= MAX_BODIES) if (!pushOut(admitted)) return;
      const start = clock(), marks: Place["marks"] = [[start, 0]];
      const place: Place = { client, holder, cost, start, charged: 0, marks };
      admitted.add(place);
      sweeper ??= setInterval(sweep, Math.max(5, readTimeoutMs / 20));
      clients.getOrInsertComputed(client, () => new Set()).add(place);
      return place;
    },
    /** Charge `n` bytes received; false (503) if they do not fit in its client's share or the
     * whole, even once slow holders are pushed out. */
    receive(place: Place, n: number): boolean {
      if (!admitted.has(place)) return false;
      const now = clock(), last = place.marks.at(-1)!, charge = n * place.cost;
      // Without client limits, the whole's bound is the client's: its places are not summed.
      const held = () => of(place.client).values().reduce((sum, p) => sum + p.charged, charge);
      while (limits.clientLimits && held() > clientBytes) {
        if (!pushOut(of(place.client), place)) return false;
      }
      while (bytes + charge > memoryBytes) if (!pushOut(admitted, place)) return false;
      place.charged += charge;
      bytes += charge;
      if (now - last[0] >= RATE_WINDOW_MS) place.marks = [last, [now, place.charged]];
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

/** The answer to a body stopped as "timeout" (behind its pace, 408), "busy" (no room, 503) or
 * "fragmented" (400); else undefined. */
export function refusedBody(cause: string | undefined, limits: BodyLimits) {
  const pace = `nothing for ${limits.readTimeoutMs} ms, or under ${limits.minRate} bytes/s`;
  if (cause === "timeout") return { status: 408, reason: `request body too slow: ${pace}` };
  if (cause === "fragmented") return { status: 400, reason: FRAGMENTED_REASON };
  if (cause !== "busy") return undefined;
  const headers = { "retry-after": String(RETRY_AFTER_SECONDS) };
  return { status: 503, reason: "too many request bodies in flight; retry later", headers };
}
