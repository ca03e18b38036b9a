/** The delivery queue: every envelope the server sends to Sentry (the tunnel's, the server SDK's),
 * held in memory in arrival order within a byte and an age bound. As Relay's upstream.rs: `live`
 * starts sends in arrival order, up to {@link MAX_IN_FLIGHT} at once; a send with no answer or a
 * 502/503/504 starts an `outage`, where only the head is sent (a probe) after a wait growing from
 * 1 s to 60 s, until one is answered. Then what was held goes one at a time, in order. Time and
 * timers come in as parameters. */
import { createClientReportEnvelope, serializeEnvelope } from "@sentry/core";
import { type Dsn, ingestUrl } from "../dsn.ts";
import { categoriesOf, createRateLimitMemory, type SendResult, verdict } from "./outcome.ts";

/** One envelope to send, as the tunnel, the server's SDK transport or a CSP forwarder hand it. */
export interface Outgoing {
  readonly url: string;
  readonly body: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  /** The DSN's public key: rate limits and the client reports of drops are per key. */
  readonly key: string;
  /** The envelope's item types as far as read ([]: unknown, e.g. a compressed body). */
  readonly itemTypes: readonly string[];
}

/** What the caller answers: 200 once queued (as Sentry would), else a refusal with its headers. */
export type Decision = { readonly status: 200; readonly headers?: undefined } | Refusal;
/** The ingest's rate limit for these envelopes (429), or no room (503), with Retry-After. */
export interface Refusal {
  readonly status: 429 | 503;
  readonly reason: string;
  readonly headers: Record<string, string>;
}

/** The queue's bounds and what it runs on; `dsns`: where each key's client reports go. Tests pass
 * a clock (wall-clock ms: Retry-After may be a date) and timers, to run an outage in ms. */
export interface DeliveryOptions {
  readonly maxBytes: number;
  readonly maxAgeMs: number;
  readonly dsns: readonly Dsn[];
  readonly fetch?: typeof fetch;
  readonly clock?: () => number;
  readonly timers?: { set(run: () => void, ms: number): unknown; clear(id: unknown): void };
  readonly log?: (line: string) => void;
  /** The first and the longest wait before a probe. */
  readonly backoffMs?: readonly [number, number];
}

/** Sends at once while live: enough to keep up with a busy tunnel over a 100 ms round trip. */
export const MAX_IN_FLIGHT = 16;
// Each envelope's bookkeeping counts against the byte bound, so small ones cannot pile up; drops
// are logged and reported to Sentry at most once a minute.
const ENTRY_OVERHEAD_BYTES = 1024, REPORT_INTERVAL_MS = 60_000;
// Relay's upstream request timeout, plus the upload at 1 MB/s: a large envelope on a slow uplink
// is not a dead ingest. One timed out this often is dropped (network_error), not left to hold the
// rest behind it as the outage's probe.
const REQUEST_TIMEOUT_MS = 5_000, UPLOAD_BYTES_PER_MS = 1_000, MAX_TIMEOUTS = 3;
// Retries during shutdown wait at most this long: its grace is a few seconds.
const SHUTDOWN_BACKOFF_MS = 250;
const TIMED_OUT = Symbol("timed out");

type Discard = { reason: string; category: string; quantity: number };
type Numbers = Record<"seq" | "at" | "bytes" | "timeouts", number>;
/** An envelope as held: its item types are kept as categories. */
type Held = Omit<Outgoing, "itemTypes">;
type Entry = Held & Numbers & { categories: readonly string[] };

// Taken before monitoring may wrap fetch for breadcrumbs: these requests are not the app's.
const platformFetch = globalThis.fetch;

/** The process's delivery queue. */
export type DeliveryQueue = ReturnType<typeof createDeliveryQueue>;

/** Build a delivery queue (one per process: the tunnel and the SDK transport share it). */
export function createDeliveryQueue(options: DeliveryOptions) {
  const { maxBytes, maxAgeMs, fetch = platformFetch, clock = Date.now } = options;
  const timers = options.timers ?? { set: setTimeout, clear: (id) => clearTimeout(id as number) };
  const log = options.log ?? ((line: string) => console.warn(line));
  const [firstWait, longestWait] = options.backoffMs ?? [1_000, 60_000];
  // Client reports go to each key's envelope endpoint, authenticated by the key in the query.
  const reportUrls = new Map(
    options.dsns.toReversed()
      .map((dsn) => [dsn.publicKey, `${ingestUrl(dsn, "envelope")}?sentry_key=${dsn.publicKey}`]),
  );
  const limits = createRateLimitMemory();
  const entries: Entry[] = []; // entries[head..] wait, oldest first
  const sending = new Map<Promise<void>, { abort: AbortController; due: number }>();
  let head = 0, held = 0, seq = 0, wait = firstWait, reportedAt = clock();
  let backlogEnd = 0; // the last envelope held when an outage ended
  let state: "live" | "outage" = "live", probeDue = false, closed = false, stopping = false;
  let probeTimer: unknown, watchdog: unknown, idle: (() => void) | undefined;
  // Per key, "reason\tcategory" -> a client report's count; per reason, envelopes for the log.
  const dropped = new Map<string, Map<string, Discard>>();
  const logged = new Map<string, number>();

  const count = (e: { key: string; categories: readonly string[] }, reason: string) => {
    logged.set(reason, (logged.get(reason) ?? 0) + 1);
    if (reason.startsWith("ingest")) return; // the ingest counted those itself
    const perKey = dropped.getOrInsertComputed(e.key, () => new Map());
    for (const category of e.categories.length ? e.categories : ["default"]) {
      perKey.getOrInsert(`${reason}\t${category}`, { reason, category, quantity: 0 }).quantity++;
    }
  };

  /** One log line for the interval's drops; a client report per key once the ingest answers. */
  const report = (now: number) => {
    const what = [...logged].map(([reason, n]) => `${n} ${reason}`).join(", ");
    if (what) log(`delivery: envelopes dropped: ${what}`);
    logged.clear();
    reportedAt = now;
    if (state === "outage" || closed) return;
    for (const [key, counts] of dropped) {
      const url = reportUrls.get(key);
      const events = [...counts.values()] as never[];
      const body = serializeEnvelope(createClientReportEnvelope(events, undefined, now / 1000));
      const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
      const headers = { "content-type": "application/x-sentry-envelope" };
      if (url) push({ url, body: bytes, headers, key }, categoriesOf(["client_report"]), now);
    }
    dropped.clear();
  };

  const push = (
    e: Held,
    categories: readonly string[],
    now: number,
    bytes = weigh(e, categories),
  ) => {
    // A view on a larger buffer would hold all of it: only the envelope's bytes are kept.
    const body = e.body.byteLength === e.body.buffer.byteLength ? e.body : e.body.slice();
    entries.push({ ...e, body, seq: ++seq, at: now, bytes, categories, timeouts: 0 });
    held += bytes;
  };

  const take = (): Entry => {
    const e = entries[head];
    entries[head++] = undefined!; // sent or dropped: its bytes are not kept until compaction
    // Compacted now and then: shifting one by one would move the whole array each time.
    if (head > 1024 && head * 2 > entries.length) entries.splice(0, head), head = 0;
    return e;
  };

  const forget = (e: Entry, reason?: string) => {
    held -= e.bytes;
    if (reason !== undefined) count(e, reason);
  };

  const settle = (e: Entry, result: SendResult, timedOut: boolean) => {
    const now = clock();
    limits.learn(e.key, result, now);
    const outcome = verdict(result);
    if (outcome === "retry") {
      if (timedOut && ++e.timeouts >= MAX_TIMEOUTS) forget(e, "network_error");
      else {
        // Back in front of what it was taken before, oldest first.
        let at = head;
        while (at < entries.length && entries[at].seq < e.seq) at++;
        if (at === head && head > 0) entries[--head] = e;
        else entries.splice(at, 0, e);
      }
      if (probeTimer === undefined && !closed) {
        if (state === "live") log(`delivery: ingest not answering; holding envelopes`);
        wait = state === "outage" ? Math.min(wait * 2, longestWait) : firstWait;
        state = "outage";
        probeTimer = timers.set(() => {
          probeTimer = undefined;
          probeDue = true;
          pump();
        }, stopping ? Math.min(wait, SHUTDOWN_BACKOFF_MS) : wait);
      }
    } else {
      const status = result === "no-answer" ? 0 : result.status;
      forget(e, outcome === "final" && status !== 429 ? `ingest refused (${status})` : undefined);
      if (state === "outage") {
        log(`delivery: ingest answers again; sending ${entries.length - head} held envelopes`);
        stopProbing();
        [state, probeDue, backlogEnd] = ["live", false, seq];
        report(now);
      }
    }
    pump();
  };

  // One timer for all sends in flight, each second, not one per send: a timeout is 1 s late at most.
  const watch = () => {
    const now = clock();
    for (const { abort, due } of sending.values()) if (due <= now) abort.abort(TIMED_OUT);
    watchdog = sending.size > 0 ? timers.set(watch, 1_000) : undefined;
  };

  const send = async (e: Entry, abort: AbortController): Promise<SendResult> => {
    try {
      const init = { method: "POST", headers: e.headers, body: e.body, redirect: "manual" };
      const res = await fetch(e.url, { ...init, signal: abort.signal } as RequestInit);
      await res.body?.cancel(); // only the status and headers are read
      return { status: res.status, headers: res.headers };
    } catch (error) {
      if (error instanceof TypeError || abort.signal.aborted) return "no-answer";
      log(`delivery: envelope not sent: ${error}`); // a bug, never retried
      return { status: 0, headers: new Headers() };
    }
  };

  const pump = () => {
    const now = clock();
    // The oldest are at the head: what is too old is dropped from there.
    while (head < entries.length && now - entries[head].at > maxAgeMs) {
      forget(take(), "network_error");
    }
    if (now - reportedAt >= REPORT_INTERVAL_MS) report(now);
    // An outage's backlog goes one at a time, so it arrives in order; but all at once while
    // stopping or past half the byte or age bound, where order would cost envelopes.
    const oldest = entries[head] as Entry | undefined;
    const ordered = oldest !== undefined && oldest.seq <= backlogEnd && !stopping &&
      held * 2 <= maxBytes && (now - oldest.at) * 2 <= maxAgeMs;
    const room = state === "outage" ? Number(probeDue) : ordered ? 1 : MAX_IN_FLIGHT;
    while (!closed && head < entries.length && sending.size < room) {
      const e = take();
      if (limits.blockedFor(e.key, e.categories, now) > 0) {
        forget(e, "ratelimit_backoff");
        continue;
      }
      probeDue = false;
      const abort = new AbortController();
      const sent: Promise<void> = send(e, abort).then((result) => {
        sending.delete(sent);
        settle(e, result, abort.signal.reason === TIMED_OUT);
      });
      const due = now + REQUEST_TIMEOUT_MS + e.body.byteLength / UPLOAD_BYTES_PER_MS;
      sending.set(sent, { abort, due });
      watchdog ??= timers.set(watch, 1_000);
    }
    if (sending.size === 0 && head === entries.length) idle?.();
  };

  const stopProbing = () => (timers.clear(probeTimer), probeTimer = undefined);

  return {
    /** Queue an envelope, or refuse it: rate-limited by the ingest (429), or no room (503). */
    enqueue(e: Outgoing): Decision {
      const categories = categoriesOf(e.itemTypes), now = clock();
      const ms = limits.blockedFor(e.key, categories, now);
      if (ms > 0) {
        const limited = { "x-sentry-rate-limits": limits.header(e.key, now) };
        const headers = { "retry-after": String(Math.ceil(ms / 1000)), ...limited };
        return { status: 429, reason: "Sentry rate-limits these envelopes; retry later", headers };
      }
      const { itemTypes: _, ...entry } = e, bytes = weigh(entry, categories);
      if (closed || held + bytes > maxBytes) {
        if (!closed) count({ key: e.key, categories }, "queue_overflow");
        const headers = { "retry-after": String(Math.max(1, Math.ceil(wait / 1000))) };
        return { status: 503, reason: "delivery queue full; retry later", headers };
      }
      push(entry, categories, now, bytes);
      pump();
      return { status: 200 };
    },
    /** Resolves true once everything held is sent (or dropped) after `more` settles (what is
     * queued meanwhile included), false after `timeoutMs`. */
    async flush(timeoutMs: number, more?: Promise<unknown>): Promise<boolean> {
      let deadline: unknown;
      const done = await new Promise<boolean>((resolve) => {
        deadline = timers.set(() => resolve(false), timeoutMs);
        const watch = () => (idle = () => resolve(true), pump());
        more ? more.then(watch, watch) : watch();
      });
      timers.clear(deadline);
      return done;
    },
    /** At shutdown: probe at once and retry sooner; send what is held and what is queued until
     * `more` settles, all within `timeoutMs`; log what was not sent; stop. */
    async drain(timeoutMs: number, more?: Promise<unknown>): Promise<void> {
      stopping = true;
      report(clock());
      if (probeTimer !== undefined) stopProbing(), probeDue = true;
      pump(); // the probe goes now, while the requests still under way finish
      if (!await this.flush(timeoutMs, more)) {
        log(`delivery: ${this.held.envelopes} envelopes (${held} bytes) not sent before shutdown`);
      }
      await this.close();
      report(clock()); // the drops meanwhile
    },
    /** Stop sending, the sends under way cut short (tests; a process ends with {@link drain}). */
    async close(): Promise<void> {
      closed = true;
      stopProbing();
      timers.clear(watchdog);
      for (const { abort } of sending.values()) abort.abort();
      await Promise.all(sending.keys());
    },
    get state() {
      return state;
    },
    /** Envelopes held (waiting or being sent) and the bytes they count for. */
    get held() {
      return { envelopes: entries.length - head + sending.size, bytes: held };
    },
  };
}

/** What an entry holds: its body, its URL, headers and categories as strings, its bookkeeping. */
function weigh(e: Held, categories: readonly string[]): number {
  const strings = [e.url, e.key, ...Object.entries(e.headers).flat(), ...categories];
  return e.body.byteLength + ENTRY_OVERHEAD_BYTES + strings.reduce((n, s) => n + s.length, 0);
}
