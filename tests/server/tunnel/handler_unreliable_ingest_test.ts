/**
 * The tunnel and its delivery queue against ingests that misbehave as real ones do, over real
 * sockets: idle keep-alive connections closed as requests go out, connections reset before or
 * mid-answer. Every envelope is answered 200 once queued, and arrives once.
 */
import assert from "node:assert/strict";
import { type Action, startScriptedIngest } from "../../support/scripted_ingest.ts";
import { buildEnvelope, encoder, post, startTunnel, test } from "../../support/tunnel_upload.ts";

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
  await tunnel.delivery.flush(10_000);
  assert.deepEqual(arrived(ingest.bodies), statuses.map((_, i) => i));
  assert.ok(ingest.resetIdle > 0, "no request met a closing connection: the test proved nothing");
  assert.deepEqual(tunnel.logs, []);
});

test("an ingest that resets 1 in 10 connections mid-answer: all 200, every envelope arrives once", async () => {
  // Cut once: the answer's head (200) is all the queue reads, so the reset after it is no failure.
  const seen = new Set<string>();
  await using ingest = await startScriptedIngest({
    act: (body): Action => {
      if (!body.includes("cut") || seen.has(body)) return "answer";
      seen.add(body);
      return "cut";
    },
  });
  await using tunnel = startTunnel([ingest.dsn]);
  const cut = (i: number) => i % 10 === 3;
  const statuses = await postAll(
    tunnel.url,
    100,
    10,
    (i) => envelope(ingest.dsn, i, cut(i) ? "cut" : ""),
  );
  assert.deepEqual(statuses, statuses.map(() => 200));
  await tunnel.delivery.flush(10_000);
  assert.deepEqual(arrived(ingest.bodies), statuses.map((_, i) => i));
  assert.equal(seen.size, 10, "ten answers were cut");
});

test("a connection reset before any answer: the envelope is sent again, and arrives once", async () => {
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
  await tunnel.delivery.flush(10_000);
  assert.deepEqual(arrived(ingest.bodies), statuses.map((_, i) => i));
});
