/**
 * The tunnel against ingests that misbehave as real ones do, over real sockets: idle keep-alive
 * connections closed as requests go out, answers held past the deadline, connections reset
 * mid-answer. One failed exchange fails only its own envelope, and nothing is lost or sent twice.
 * No clock: the test closes the connections and fires the deadline.
 */
import assert from "node:assert/strict";
import { type Action, startScriptedIngest } from "../../support/scripted_ingest.ts";
import { HELD_MS, holdTimers } from "../../support/held_timers.ts";
import {
  assertOneLineReason,
  buildEnvelope,
  chunkedStream,
  encoder,
  eventually,
  MiB,
  post,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

/** Envelope `i`, its payload naming it (and `mark`, for the ingest to act on). */
function envelope(dsn: string, i: number, mark = "") {
  return buildEnvelope(dsn, encoder.encode(`envelope ${i} ${mark}.`));
}

/** The envelope numbers in the bodies an ingest received, sorted. */
function arrived(bodies: readonly string[]): number[] {
  return bodies.map((body) => Number(/envelope (\d+) /.exec(body)![1])).toSorted((a, b) => a - b);
}

/**
 * Post envelopes 0..count-1, `concurrency` at a time; the statuses by envelope number (filled
 * into `statuses` as they come).
 */
async function postAll(
  url: string,
  count: number,
  concurrency: number,
  make: (i: number) => Uint8Array<ArrayBuffer>,
  statuses: number[] = [],
) {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++;
      statuses[i] = (await post(url, make(i))).status;
    }
  }));
  return statuses;
}

test("an ingest that closes idle connections, some as a request crosses the close: all arrive once, all 2xx", async () => {
  await using ingest = await startScriptedIngest();
  await using tunnel = startTunnel([ingest.dsn]);
  // Between envelopes the ingest keeps its connection, closes it at once, or closes it just as
  // the next request goes out, so requests meet live connections, ones the ingest has closed,
  // and ones whose close crosses them on the wire. (Deno's fetch resends a request a reused
  // connection lost so; the tunnel's own resend is for fresh connections, below.)
  const between = ["keep", "as-next-request-arrives", "keep", "now"] as const;
  const statuses: number[] = [];
  for (let i = 0; i < 28; i++) {
    statuses.push((await post(tunnel.url, envelope(ingest.dsn, i))).status);
    const close = between[i % between.length];
    if (close !== "keep") ingest.closeIdle(close);
  }
  assert.deepEqual(statuses, statuses.map(() => 200));
  assert.deepEqual(arrived(ingest.bodies), statuses.map((_, i) => i));
  assert.ok(ingest.resetIdle > 0, "no request met a closing connection: the test proved nothing");
  assert.deepEqual(tunnel.logs, []);
});

test("an ingest that holds 1 in 20 answers past the deadline: only those answer 504, and every envelope arrives", async () => {
  await using ingest = await startScriptedIngest({
    act: (body): Action => body.includes("slow") ? "hold" : "answer",
  });
  await using tunnel = startTunnel([ingest.dsn], { timeoutMs: HELD_MS });
  // The deadline fires when the test says: once every other envelope has its answer.
  using deadlines = holdTimers(HELD_MS);
  const slow = (i: number) => i % 20 === 7;
  const statuses: number[] = [];
  const posting = postAll(
    tunnel.url,
    100,
    10,
    (i) => envelope(ingest.dsn, i, slow(i) ? "slow" : ""),
    statuses,
  );
  await eventually(
    () => ingest.held === 5 && statuses.filter((s) => s !== undefined).length === 95,
    "95 answers, and 5 held by the ingest",
    30_000,
  );
  assert.equal(deadlines.pending, 5, "only the held envelopes are still waiting");
  deadlines.fire();
  await posting;
  ingest.release(); // too late: the tunnel has given up on them and closed their connections
  assert.deepEqual(statuses, statuses.map((_, i) => slow(i) ? 504 : 200));
  assert.deepEqual(arrived(ingest.bodies), statuses.map((_, i) => i));
  assert.deepEqual(tunnel.logs.map((l) => l.status), [504, 504, 504, 504, 504]);
});

test("an ingest that resets 1 in 10 connections mid-answer: only those answer 502, every envelope arrives once", async () => {
  await using ingest = await startScriptedIngest({
    act: (body): Action => body.includes("cut") ? "cut" : "answer",
  });
  await using tunnel = startTunnel([ingest.dsn]);
  const cut = (i: number) => i % 10 === 3;
  const statuses = await postAll(
    tunnel.url,
    100,
    10,
    (i) => envelope(ingest.dsn, i, cut(i) ? "cut" : ""),
  );
  assert.deepEqual(statuses, statuses.map((_, i) => cut(i) ? 502 : 200));
  // An answer had begun: the reset envelopes are not sent again.
  assert.deepEqual(arrived(ingest.bodies), statuses.map((_, i) => i));
});

test("a connection reset before any answer: a small envelope is sent once more, a streamed one is a 502", async () => {
  const resetOnce = new Set<string>();
  await using ingest = await startScriptedIngest({
    act: (body): Action => {
      if (resetOnce.has(body)) return "answer";
      resetOnce.add(body);
      return "reset";
    },
  });
  await using tunnel = startTunnel([ingest.dsn]);
  const statuses = await postAll(tunnel.url, 20, 5, (i) => envelope(ingest.dsn, i));
  assert.deepEqual(statuses, statuses.map(() => 200));
  assert.deepEqual(arrived(ingest.bodies), statuses.map((_, i) => i));
  // A stream cannot be replayed: its reset is the browser's 502 (the SDK may send it again).
  const streamed = await post(tunnel.url, chunkedStream(envelope(ingest.dsn, 99, "x".repeat(MiB))));
  assertOneLineReason(streamed, 502, /unreachable/);
  assert.equal(ingest.bodies.length, 20);
});
