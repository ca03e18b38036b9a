/**
 * The delivery queue on a fake clock and fake timers, against a fake upstream `fetch` that fails
 * as the test says: a minute of outage runs in milliseconds. What arrives is counted; no timing
 * is asserted.
 */
import assert from "node:assert/strict";
import { createDeliveryQueue, type Outgoing } from "../../../server/delivery/queue.ts";
import { parseDsn } from "../../../server/dsn.ts";

const DSN = parseDsn("https://key@ingest.example/7")!;
const URL_ = "https://ingest.example/api/7/envelope/";
const encoder = new TextEncoder();

/** A clock and timers the test moves: `advance` runs what falls due, in order. */
function fakeTime() {
  let now = 1_000_000;
  let nextId = 0;
  const due = new Map<number, { at: number; run: () => void }>();
  return {
    clock: () => now,
    timers: {
      set: (run: () => void, ms: number) => (due.set(++nextId, { at: now + ms, run }), nextId),
      clear: (id: unknown) => void due.delete(id as number),
    },
    /** Move the clock by `ms`, running each timer that falls due and letting its sends settle. */
    async advance(ms: number) {
      const end = now + ms;
      for (;;) {
        const [id, next] = [...due].filter(([, t]) =>
          t.at <= end
        ).sort((a, b) => a[1].at - b[1].at)[0] ?? [];
        if (next === undefined) break;
        now = Math.max(now, next.at);
        due.delete(id!);
        next.run();
        await turn();
      }
      now = end;
      await turn();
    },
  };
}

const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

/** An upstream that answers as `mode` says, recording every body it got. */
function fakeIngest() {
  const received: string[] = [];
  let tries = 0;
  let mode: "down" | "up" | number | ((body: string) => Response) = "up";
  const fetch = (async (_url: string, init: RequestInit) => {
    tries++;
    assert.equal(init.redirect, "manual");
    await Promise.resolve();
    if (mode === "down") throw new TypeError("connection refused");
    const body = new TextDecoder().decode(init.body as Uint8Array);
    if (typeof mode === "function") return mode(body);
    if (typeof mode === "number") return new Response(null, { status: mode });
    received.push(body);
    return Response.json({ id: "1" });
  }) as typeof globalThis.fetch;
  return {
    fetch,
    received,
    get tries() {
      return tries;
    },
    set: (next: typeof mode) => void (mode = next),
  };
}

function envelope(i: number, type = "event"): Outgoing {
  const body = encoder.encode(`{"dsn":"https://key@ingest.example/7"}\n{"type":"${type}"}\n${i}`);
  return { url: URL_, body, headers: {}, key: "key", itemTypes: [type] };
}

/** The numbers of the envelopes received, client reports apart. */
const numbers = (received: string[]) =>
  received.filter((b) => !b.includes("client_report")).map((b) => Number(b.split("\n")[2]));

type Bounds = { maxBytes?: number; maxAgeMs?: number };

/** A queue on fake time sending to `ingest`, its log lines kept. */
function queueTo<I extends { fetch: typeof fetch }>(ingest: I, options: Bounds) {
  const time = fakeTime();
  const logs: string[] = [];
  const queue = createDeliveryQueue({
    maxBytes: options.maxBytes ?? 64 * 1024 * 1024,
    maxAgeMs: options.maxAgeMs ?? 3_600_000,
    dsns: [DSN],
    fetch: ingest.fetch,
    clock: time.clock,
    timers: time.timers,
    log: (line) => logs.push(line),
  });
  return { time, ingest, logs, queue };
}

const start = (options: Bounds = {}) => queueTo(fakeIngest(), options);

Deno.test("60 s of refused connections at 10 envelopes a second: all queued, then each arrives once, in order", async () => {
  const { time, ingest, logs, queue } = start();
  ingest.set("down");
  const statuses: number[] = [];
  for (let i = 0; i < 600; i++) {
    statuses.push(queue.enqueue(envelope(i)).status);
    await time.advance(100);
  }
  assert.deepEqual(new Set(statuses), new Set([200]));
  assert.equal(queue.state, "outage");
  // Probes only, with a backoff from 1 s doubling to 60 s: a handful in a minute, not 600.
  assert.ok(ingest.tries < 10, `${ingest.tries} tries`);
  ingest.set("up");
  await time.advance(60_000);
  assert.equal(await queue.flush(1e9), true);
  assert.deepEqual(numbers(ingest.received), statuses.map((_, i) => i));
  assert.equal(queue.state, "live");
  assert.deepEqual(queue.held, { envelopes: 0, bytes: 0 });
  assert.ok(logs.some((l) => /not answering/.test(l)) && logs.some((l) => /answers again/.test(l)));
  await queue.close();
});

Deno.test("an ingest answering 503 for a minute: the same, nothing lost or sent twice", async () => {
  const { time, ingest, queue } = start();
  ingest.set(503);
  for (let i = 0; i < 100; i++) {
    assert.equal(queue.enqueue(envelope(i)).status, 200);
    await time.advance(600);
  }
  ingest.set("up");
  await time.advance(60_000);
  await queue.flush(1e9);
  assert.deepEqual(numbers(ingest.received), Array.from({ length: 100 }, (_, i) => i));
  await queue.close();
});

Deno.test("429 Retry-After 30 with limits for every category: one envelope reaches the ingest, the rest get 429 with the time left", async () => {
  const { time, ingest, queue } = start();
  let sent = 0;
  ingest.set(() => (sent++,
    new Response(null, {
      status: 429,
      headers: { "retry-after": "30", "x-sentry-rate-limits": "30::organization" },
    }))
  );
  assert.equal(queue.enqueue(envelope(0)).status, 200);
  await time.advance(0);
  const refusals = [];
  for (let i = 1; i <= 25; i++) {
    const decision = queue.enqueue(envelope(i, i % 2 ? "transaction" : "event"));
    assert.equal(decision.status, 429);
    refusals.push(decision);
    await time.advance(1_000);
  }
  assert.equal(sent, 1, "only the envelope that learned the limit");
  const first = refusals[0] as { headers: Record<string, string> };
  assert.deepEqual(first.headers, { "retry-after": "30", "x-sentry-rate-limits": "30::key" });
  const last = refusals.at(-1) as { headers: Record<string, string> };
  assert.equal(last.headers["retry-after"], "6");
  await time.advance(6_000);
  ingest.set("up");
  assert.equal(queue.enqueue(envelope(99)).status, 200, "the limit has expired");
  await queue.flush(1e9);
  assert.deepEqual(numbers(ingest.received), [99]);
  await queue.close();
});

Deno.test("a limit on one category holds those envelopes only, queued ones included", async () => {
  const { time, ingest, queue } = start();
  ingest.set("down");
  queue.enqueue(envelope(0, "event"));
  queue.enqueue(envelope(1, "transaction"));
  queue.enqueue(envelope(2, "event"));
  await time.advance(0);
  // The probe learns of a limit on transactions (with a 200): the queued transaction is dropped.
  ingest.set((body) => {
    ingest.received.push(body);
    return Response.json({}, { headers: { "x-sentry-rate-limits": "60:transaction:project" } });
  });
  await time.advance(1_000);
  await queue.flush(1e9);
  assert.deepEqual(numbers(ingest.received), [0, 2]);
  assert.equal(queue.enqueue(envelope(3, "transaction")).status, 429);
  assert.equal(queue.enqueue(envelope(4, "event")).status, 200);
  await queue.close();
});

Deno.test("twice the queue's size during an outage: 503 with Retry-After past it; what was queued arrives once, the rest as a client report", async () => {
  const size = 1000 + 1024; // an envelope of about 1000 bytes and its bookkeeping
  const { time, ingest, logs, queue } = start({ maxBytes: 20 * size });
  ingest.set("down");
  const statuses = [];
  for (let i = 0; i < 40; i++) {
    const e = envelope(i);
    const body = new Uint8Array(1000).fill(0x20);
    body.set(e.body);
    const decision = queue.enqueue({ ...e, body });
    statuses.push(decision.status);
    if (decision.status === 503) assert.match(decision.headers["retry-after"], /^[1-9]\d*$/);
  }
  const queued = statuses.filter((s) => s === 200).length;
  assert.ok(queued >= 19 && queued <= 20, `${queued} queued`);
  assert.deepEqual(statuses.slice(queued), Array(40 - queued).fill(503));
  ingest.set("up");
  await time.advance(61_000);
  await queue.flush(1e9);
  assert.deepEqual(numbers(ingest.received), statuses.slice(0, queued).map((_, i) => i));
  const reports = ingest.received.filter((b) => b.includes("client_report"));
  assert.equal(reports.length, 1);
  const [header, item, payload] = reports[0].trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(header, {}); // sent to the key's endpoint with ?sentry_key=
  assert.equal(item.type, "client_report");
  assert.deepEqual(payload.discarded_events, [
    { reason: "queue_overflow", category: "error", quantity: 40 - queued },
  ]);
  assert.ok(logs.some((l) => l.includes(`${40 - queued} queue_overflow`)), logs.join("\n"));
  await queue.close();
});

Deno.test("envelopes older than the age bound are dropped, counted as network_error", async () => {
  const { time, ingest, queue } = start({ maxAgeMs: 30_000 });
  ingest.set("down");
  for (let i = 0; i < 10; i++) {
    queue.enqueue(envelope(i, "transaction"));
    await time.advance(5_000);
  }
  // The first are over 30 s old when a probe (at 63 s) finds the ingest back.
  ingest.set("up");
  await time.advance(20_000);
  await queue.flush(1e9);
  const sent = numbers(ingest.received);
  assert.ok(
    sent.length > 0 && sent.length < 10 && sent.every((n, i) => n === 10 - sent.length + i),
    `${sent}`,
  );
  const report = ingest.received.find((b) => b.includes("client_report"))!;
  const payload = JSON.parse(report.trim().split("\n")[2]);
  assert.deepEqual(payload.discarded_events, [
    { reason: "network_error", category: "transaction", quantity: 10 - sent.length },
  ]);
  await queue.close();
});

Deno.test("4xx and redirects are final: sent once, never followed or retried, counted in the log", async () => {
  const { time, ingest, logs, queue } = start();
  for (const status of [400, 403, 413, 302]) {
    ingest.set(status);
    queue.enqueue(envelope(status));
    await queue.flush(1e9);
  }
  assert.equal(ingest.tries, 4);
  assert.equal(queue.state, "live");
  await time.advance(60_000);
  queue.enqueue(envelope(1)); // the minute is over: the drops are logged
  assert.ok(logs.some((l) => /ingest refused \(413\)/.test(l)), logs.join("\n"));
  await queue.close();
});

Deno.test("a fetch that fails with a bug: logged once, dropped, never retried", async () => {
  const { ingest, logs, queue } = start();
  ingest.set(() => {
    throw new RangeError("bug");
  });
  queue.enqueue(envelope(0));
  await queue.flush(1e9);
  assert.equal(ingest.tries, 1);
  assert.equal(queue.state, "live");
  assert.ok(logs.some((l) => /RangeError: bug/.test(l)));
  await queue.close();
});

Deno.test("shutdown with a backlog: retried every 250 ms, all sent once the ingest is back within the grace", async () => {
  const { time, ingest, logs, queue } = start();
  ingest.set("down");
  for (let i = 0; i < 30; i++) queue.enqueue(envelope(i));
  await time.advance(40_000); // the backoff is at 16 s or more by now
  const draining = queue.drain(4_000);
  await time.advance(1_000);
  ingest.set("up");
  await time.advance(500);
  await draining;
  assert.deepEqual(numbers(ingest.received), Array.from({ length: 30 }, (_, i) => i));
  assert.deepEqual(logs.filter((l) => /not sent/.test(l)), []);
  assert.equal(queue.enqueue(envelope(99)).status, 503, "closed after the drain");
});

Deno.test("shutdown with the ingest still down: what was not sent is logged with its size", async () => {
  const { time, ingest, logs, queue } = start();
  ingest.set("down");
  for (let i = 0; i < 3; i++) queue.enqueue(envelope(i));
  const draining = queue.drain(4_000);
  await time.advance(5_000);
  await draining;
  // Each: its body, its URL and key, its category ("error"), its bookkeeping.
  const each = (i: number) => envelope(i).body.byteLength + URL_.length + "key".length + 5 + 1024;
  const bytes = [0, 1, 2].reduce((n, i) => n + each(i), 0);
  assert.ok(logs.includes(`delivery: 3 envelopes (${bytes} bytes) not sent before shutdown`));
});

/** An upstream whose answers the test gives one by one: each send waits in `waiting`. */
function heldIngest() {
  const waiting: { body: string; answer: (res: Response | Error) => void }[] = [];
  const starts: string[] = [];
  const fetch = ((_url: string, init: RequestInit) => {
    const body = new TextDecoder().decode(init.body as Uint8Array);
    starts.push(body);
    return new Promise<Response>((resolve, reject) => {
      init.signal?.addEventListener("abort", () => reject(init.signal!.reason));
      waiting.push({ body, answer: (r) => r instanceof Error ? reject(r) : resolve(r) });
    });
  }) as typeof globalThis.fetch;
  return { fetch, waiting, starts };
}

const startHeld = (options: Bounds = {}) => queueTo(heldIngest(), options);

const answer = (w: { answer: (r: Response | Error) => void }) => w.answer(Response.json({}));
const refuse = (w: { answer: (r: Response | Error) => void }) => w.answer(new TypeError("refused"));
const number = (body: string) => Number(body.split("\n")[2]);

/** An outage of 100 envelopes, ended by the probe of envelope 0. */
async function afterOutage(held: ReturnType<typeof startHeld>, size = 0) {
  const { time, ingest, queue } = held;
  const body = (i: number) => ({ ...envelope(i), body: new Uint8Array(size).fill(0x20) });
  queue.enqueue(size ? body(0) : envelope(0));
  refuse(ingest.waiting.shift()!);
  await time.advance(0);
  for (let i = 1; i < 100; i++) queue.enqueue(size ? body(i) : envelope(i));
  await time.advance(1_000);
  assert.equal(ingest.waiting.length, 1, "the probe alone");
  answer(ingest.waiting.shift()!);
  await time.advance(0);
  assert.equal(queue.state, "live");
}

Deno.test("once a probe is answered, the backlog goes one at a time, in order; what came after, 16 at a time", async () => {
  const held = startHeld();
  const { time, ingest, queue } = held;
  await afterOutage(held);
  for (let i = 100; i < 120; i++) queue.enqueue(envelope(i)); // arriving during the recovery
  const inFlight = [];
  while (ingest.waiting.length) {
    inFlight.push(ingest.waiting.length);
    answer(ingest.waiting.shift()!);
    await time.advance(0);
  }
  assert.deepEqual(inFlight.slice(0, 99), Array(99).fill(1), "the backlog: never two at once");
  assert.equal(inFlight[99], 16, "after it, as live");
  assert.deepEqual(ingest.starts.map(number), [0, ...Array.from({ length: 120 }, (_, i) => i)]);
  await queue.close();
});

Deno.test("a backlog past half the byte bound goes 16 at a time until under it: order does not cost room", async () => {
  const held = startHeld({ maxBytes: 150 * 11 * 1024 });
  const { time, ingest, queue } = held;
  await afterOutage(held, 10 * 1024); // 99 of 11 KiB held, of 150
  assert.equal(ingest.waiting.length, 16);
  const inFlight = [];
  while (ingest.waiting.length) {
    inFlight.push(ingest.waiting.length);
    answer(ingest.waiting.shift()!);
    await time.advance(0);
  }
  // 99 -> 75 held (half of 150) 16 at a time, then one at a time.
  assert.equal(inFlight.filter((n) => n > 1).length, 99 - 75 + 15, `${inFlight}`);
  assert.deepEqual(inFlight.slice(-60), Array(60).fill(1));
  await queue.close();
});

Deno.test("a backlog past half the age bound, or one left at shutdown, goes 16 at a time", async () => {
  const old = startHeld({ maxAgeMs: 1_500 }); // the backlog is 1 s old at the probe's answer
  await afterOutage(old);
  assert.equal(old.ingest.waiting.length, 16);
  await old.queue.close();
  const stopping = startHeld();
  await afterOutage(stopping);
  assert.equal(stopping.ingest.waiting.length, 1);
  const drained = stopping.queue.drain(4_500);
  answer(stopping.ingest.waiting.shift()!);
  await stopping.time.advance(0);
  assert.equal(stopping.ingest.waiting.length, 16);
  await stopping.time.advance(4_500);
  await drained;
});

Deno.test("a late answer that ends an outage also clears a due probe: the next outage waits its backoff (review 10)", async () => {
  const { time, ingest, queue } = startHeld({ maxAgeMs: 1_200 });
  queue.enqueue({ ...envelope(0), key: "unreported" }); // its drop makes no client report
  await time.advance(400);
  queue.enqueue(envelope(1));
  queue.enqueue(envelope(2));
  refuse(ingest.waiting.shift()!); // 0 fails: outage; 1 and 2 are still under way
  await time.advance(0);
  await time.advance(1_000); // the probe is due: 0 is too old by now, nothing is sent
  assert.equal(ingest.starts.length, 3);
  answer(ingest.waiting.shift()!); // 1's late answer: the ingest is back
  await time.advance(0);
  assert.equal(queue.state, "live");
  refuse(ingest.waiting.shift()!); // 2 fails: a new outage
  await time.advance(0);
  assert.equal(queue.state, "outage");
  assert.equal(ingest.starts.length, 3, "no probe before the backoff's first wait");
  await queue.close();
});

Deno.test("an envelope that times out 3 times is dropped as network_error, the rest flow; a large one gets time to upload (review 6)", async () => {
  const { time, ingest, logs, queue } = startHeld();
  const large = envelope(0);
  const body = new Uint8Array(20_000_000).fill(0x20);
  body.set(large.body);
  queue.enqueue({ ...large, body });
  queue.enqueue(envelope(1));
  answer(ingest.waiting.pop()!); // 1 is answered
  await time.advance(5_000 + 19_000); // 5 s + 20 MB at 1 MB/s: not yet
  assert.equal(ingest.starts.length, 2);
  await time.advance(2_000); // the large one times out: retried alone, twice more
  for (const wait of [1_000, 2_000]) await time.advance(wait + 25_000);
  assert.equal(ingest.starts.length, 4, "sent three times in all");
  assert.equal(queue.held.envelopes, 0);
  queue.enqueue(envelope(2));
  await time.advance(4_000);
  assert.equal(ingest.starts.length, 5, "the next probe takes the next envelope");
  answer(ingest.waiting.shift()!);
  await time.advance(60_000);
  assert.ok(logs.some((l) => /1 network_error/.test(l)), logs.join("\n"));
  await queue.close();
});

Deno.test("the byte bound counts headers: a 256 KB User-Agent takes its room (review 5)", () => {
  const { queue } = startHeld({ maxBytes: 1024 * 1024 });
  const headers = { "user-agent": "x".repeat(256 * 1024) };
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push(queue.enqueue({ ...envelope(i), headers }).status);
  assert.deepEqual(statuses, [200, 200, 200, 503, 503, 503]);
  assert.ok(queue.held.bytes > 3 * 256 * 1024);
  return queue.close();
});

Deno.test("shutdown: probes at once, and keeps taking envelopes until the requests are done, within one deadline (review 3)", async () => {
  const { time, ingest, logs, queue } = startHeld();
  queue.enqueue(envelope(0));
  for (const wait of [0, 1_000, 2_000, 4_000, 8_000, 16_000]) {
    await time.advance(wait);
    refuse(ingest.waiting.shift()!);
    await time.advance(0);
  } // the next probe is 32 s away
  const requests = Promise.withResolvers<void>();
  const draining = queue.drain(4_500, requests.promise);
  await time.advance(0);
  assert.equal(ingest.starts.length, 7, "probed at once");
  answer(ingest.waiting.shift()!);
  await time.advance(0);
  assert.equal(queue.enqueue(envelope(1)).status, 200, "a request still under way");
  answer(ingest.waiting.shift()!);
  await time.advance(100);
  requests.resolve();
  await time.advance(0);
  await draining;
  assert.deepEqual(ingest.starts.slice(-2).map(number), [0, 1]);
  assert.deepEqual(logs.filter((l) => /not sent/.test(l)), []);
});
