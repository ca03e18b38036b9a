/**
 * The tunnel over real sockets with its delivery queue (retries after 20 ms, doubling to 200 ms):
 * an ingest that is down, answers 503, or rate-limits; the overall budget per DSN. The browser
 * gets 200 once its envelope is queued; what arrives is counted.
 */
import assert from "node:assert/strict";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import { assertSentInOrder } from "../../support/delivery_order.ts";
import { createDsnBudget } from "../../../server/tunnel/handler.ts";
import {
  assertOneLineReason,
  closedPort,
  encoder,
  post,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

/** Envelope `i` of item `type` for `dsn`, its payload naming it. */
function envelope(dsn: string, i: number, type = "event") {
  return encoder.encode(`${JSON.stringify({ dsn })}\n{"type":"${type}"}\n{"n":${i}}\n`);
}
const numbers = (bodies: Uint8Array[]) =>
  bodies.map((b) => JSON.parse(new TextDecoder().decode(b).split("\n")[2]).n);

test("an ingest refusing connections while 40 envelopes arrive: all answered 200, then each arrives once, in order", async () => {
  const port = closedPort();
  const dsn = `http://public@127.0.0.1:${port}/1`;
  await using tunnel = startTunnel([dsn]);
  const statuses = [];
  for (let i = 0; i < 40; i++) statuses.push((await post(tunnel.url, envelope(dsn, i))).status);
  assert.deepEqual(statuses, Array(40).fill(200));
  assert.equal(tunnel.delivery.state, "outage");
  await using ingest = startFakeIngest({}, port);
  assert.equal(await tunnel.delivery.flush(10_000), true);
  // The backlog goes one at a time: each arrives in order, not only starts in order.
  assert.deepEqual(numbers(ingest.requests.map((r) => r.body)), statuses.map((_, i) => i));
  assert.deepEqual(tunnel.logs, [], "nothing refused");
});

test("an ingest answering 503 for a while: all answered 200, each taken once, in order", async () => {
  await using ingest = startFakeIngest();
  let down = true;
  const taken: Uint8Array[] = [];
  ingest.reply((request) => {
    if (down) return { status: 503, body: "unavailable" };
    taken.push(request.body);
    return {};
  });
  await using tunnel = startTunnel([ingest.dsn()]);
  const statuses = [];
  for (let i = 0; i < 30; i++) {
    statuses.push((await post(tunnel.url, envelope(ingest.dsn(), i))).status);
  }
  assert.deepEqual(statuses, Array(30).fill(200));
  down = false;
  assert.equal(await tunnel.delivery.flush(10_000), true);
  assert.deepEqual(numbers(taken), statuses.map((_, i) => i));
});

test("429 Retry-After 30 with limits for every category: one envelope per DSN reaches the ingest, clients get 429 with the time left", async () => {
  await using ingest = startFakeIngest({
    status: 429,
    headers: { "retry-after": "30", "x-sentry-rate-limits": "30::organization:quota" },
  });
  const [one, two] = [ingest.dsn("public", "1"), ingest.dsn("other", "2")];
  await using tunnel = startTunnel([one, two]);
  assert.equal((await post(tunnel.url, envelope(one, 0))).status, 200);
  await tunnel.delivery.flush(10_000); // its 429 has come back
  for (let i = 1; i <= 20; i++) {
    const answer = await post(tunnel.url, envelope(one, i, i % 2 ? "transaction" : "replay_event"));
    assertOneLineReason(answer, 429, /rate-limits/);
    const retryAfter = Number(answer.headers.get("retry-after"));
    assert.ok(retryAfter >= 1 && retryAfter <= 30, `${retryAfter}`);
    assert.match(answer.headers.get("x-sentry-rate-limits")!, /^([1-9]|[12]\d|30)::key$/);
  }
  // Per DSN: the other one still goes, once, and learns its own limit.
  assert.equal((await post(tunnel.url, envelope(two, 0))).status, 200);
  await tunnel.delivery.flush(10_000);
  assert.equal((await post(tunnel.url, envelope(two, 1))).status, 429);
  await tunnel.delivery.flush(10_000);
  assert.deepEqual(ingest.requests.map((r) => r.path), ["/api/1/envelope/", "/api/2/envelope/"]);
});

test("a limit on transactions, read from the envelope's item headers: transactions 429, errors still 200", async () => {
  await using ingest = startFakeIngest({
    headers: { "x-sentry-rate-limits": "60:transaction:project" },
  });
  await using tunnel = startTunnel([ingest.dsn()]);
  assert.equal((await post(tunnel.url, envelope(ingest.dsn(), 0, "transaction"))).status, 200);
  await tunnel.delivery.flush(10_000);
  const limited = await post(tunnel.url, envelope(ingest.dsn(), 1, "transaction"));
  assert.equal(limited.status, 429);
  assert.match(limited.headers.get("x-sentry-rate-limits")!, /^(59|60):transaction:key$/);
  assert.equal((await post(tunnel.url, envelope(ingest.dsn(), 2, "event"))).status, 200);
  await tunnel.delivery.flush(10_000);
  assert.deepEqual(numbers(ingest.requests.map((r) => r.body)), [0, 2]);
});

test("2,000 envelopes from rotating X-Forwarded-For addresses: the DSN's budget reaches the ingest, the rest get 429", async () => {
  await using ingest = startFakeIngest();
  // A clock that stands still: the budget (100 a minute, also its burst) does not refill.
  await using tunnel = startTunnel([ingest.dsn()], {
    trustProxy: true,
    rateLimit: 600,
    dsnBudget: createDsnBudget(100, () => 0),
    clock: () => 0,
  });
  const statuses = new Map<number, number>();
  let next = 0;
  await Promise.all(Array.from({ length: 20 }, async () => {
    while (next < 2000) {
      const i = next++;
      const xff = `10.${i >> 8}.${i & 255}.1`;
      const answer = await post(tunnel.url, envelope(ingest.dsn(), i), { "x-forwarded-for": xff });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      if (answer.status === 429) assert.match(answer.headers.get("retry-after")!, /^[1-9]\d*$/);
    }
  }));
  assert.deepEqual(Object.fromEntries(statuses), { 200: 100, 429: 1900 });
  await tunnel.delivery.flush(10_000);
  assert.equal(ingest.requests.length, 100);
  assert.match(String(tunnel.logs[0].reason), /too many envelopes for this DSN/);
});

test("a full queue: 503 with Retry-After, nothing lost of what was answered 200", async () => {
  const port = closedPort();
  const dsn = `http://public@127.0.0.1:${port}/1`;
  const filler = "x".repeat(4000);
  const big = (i: number) =>
    encoder.encode(`{"dsn":"${dsn}"}\n{"type":"event"}\n{"n":${i},"f":"${filler}"}\n`);
  await using tunnel = startTunnel([dsn], {}, { maxBytes: 10 * (4100 + 1024) });
  const statuses = [];
  for (let i = 0; i < 20; i++) {
    const answer = await post(tunnel.url, big(i));
    statuses.push(answer.status);
    if (answer.status === 503) assert.match(answer.headers.get("retry-after")!, /^[1-9]\d*$/);
  }
  const queued = statuses.indexOf(503);
  assert.ok(queued >= 9, `${statuses}`);
  assert.deepEqual(statuses.slice(queued), Array(20 - queued).fill(503));
  await using ingest = startFakeIngest({}, port);
  await tunnel.delivery.flush(10_000);
  const events = ingest.requests.filter((r) =>
    !new TextDecoder().decode(r.body).includes("client_report")
  );
  assertSentInOrder(numbers(events.map((r) => r.body)), statuses.slice(0, queued).map((_, i) => i));
});
