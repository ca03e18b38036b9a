/**
 * Nothing lost, end to end: the real server (launcher and main.ts, or the fixture app on its own
 * process where its memory is read) with its ingest down, then back; the tunnel's envelopes and
 * the server's own errors go through one delivery queue. Counted, never timed: the waits are
 * the queue's own backoff (1 s, then 2 s), driven by the ingest coming back.
 */
import assert from "node:assert/strict";
import type { Event } from "@sentry/core";
import { type FakeIngest, startFakeIngest } from "./support/fake_ingest.ts";
import { type RunningServer, startFixtureServer, startServer } from "./support/server.ts";
import { closedPort } from "./support/tunnel_upload.ts";
import { assertSentInOrder } from "./support/delivery_order.ts";
import { memory } from "./support/process_memory.ts";

const encoder = new TextEncoder();

/** The app with its ingest down: a loopback port nothing listens on (bound, then closed), where
 * the test starts the ingest later; the app's own DSN names it, and /debug/error reports. */
async function startWithIngestDown() {
  const port = closedPort();
  const dsn = `http://key@127.0.0.1:${port}/7`;
  const server = await startServer({
    SENTRY_DSN: dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0",
    TUNNEL_RATE_LIMIT: "0",
    DEBUG_ERROR_ROUTE: "true",
  });
  return { port, dsn, server };
}

function envelope(dsn: string, i: number, fill = 0): Uint8Array<ArrayBuffer> {
  return encoder.encode(
    `${JSON.stringify({ dsn })}\n{"type":"event"}\n{"message":"tunnel ${i}","f":"${
      "x".repeat(fill)
    }"}\n`,
  );
}

async function post(url: string, body: Uint8Array<ArrayBuffer>) {
  const res = await fetch(`${url}monitoring`, { method: "POST", body });
  await res.body?.cancel();
  return res;
}

async function get(url: string) {
  const res = await fetch(url);
  await res.body?.cancel();
  return res.status;
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** What reached the ingest: the tunnel's envelopes by number, the server's errors by time. */
async function arrived(ingest: FakeIngest) {
  const tunnel: number[] = [];
  const server: number[] = [];
  const reports: { reason: string; category: string; quantity: number }[] = [];
  for (const [, items] of await ingest.envelopes()) {
    for (const [header, payload] of items) {
      const event = payload as Event & { discarded_events?: typeof reports };
      const n = /^tunnel (\d+)$/.exec(event.message as string ?? "")?.[1];
      if (n !== undefined) tunnel.push(Number(n));
      else if (header.type === "event") server.push(event.timestamp!);
      else if (header.type === "client_report") reports.push(...event.discarded_events!);
    }
  }
  return { tunnel, server, reports };
}

async function stopped(server: RunningServer) {
  const status = await server.stop("SIGTERM");
  assert.equal(status.code, 0, server.output());
}

Deno.test("ingest refusing connections while envelopes arrive and the server reports errors: all 200, then each arrives once, in order", async () => {
  const { port, dsn, server } = await startWithIngestDown();
  try {
    const statuses = [];
    for (let i = 0; i < 20; i++) {
      statuses.push((await post(server.url, envelope(dsn, i))).status);
      if (i % 4 === 0) assert.equal(await get(`${server.url}debug/error`), 500);
    }
    assert.deepEqual(statuses, Array(20).fill(200), "none answered 5xx while the queue has room");
    await waitFor(() => /ingest not answering/.test(server.output()), "the outage to be noticed");
    await using ingest = startFakeIngest({}, port);
    await waitFor(() => ingest.requests.length >= 25, "20 envelopes and 5 errors");
    await waitFor(() => /answers again/.test(server.output()), "the recovery line");
    const { tunnel, server: errors } = await arrived(ingest);
    // The backlog goes one at a time: each arrives once and in the order it was queued.
    assert.deepEqual(tunnel, statuses.map((_, i) => i));
    assert.equal(new Set(errors).size, 5);
    assert.deepEqual(errors, errors.toSorted((a, b) => a - b), "the server's errors in order");
    await stopped(server);
    assert.equal((await arrived(ingest)).tunnel.length, 20, "nothing sent twice");
  } finally {
    await server.stop("SIGKILL");
  }
});

Deno.test("SIGTERM with a backlog and the ingest back within the grace: all of it arrives", async () => {
  const { port, dsn, server } = await startWithIngestDown();
  try {
    for (let i = 0; i < 20; i++) {
      assert.equal((await post(server.url, envelope(dsn, i))).status, 200);
    }
    for (let i = 0; i < 3; i++) assert.equal(await get(`${server.url}debug/error`), 500);
    server.process.kill("SIGTERM");
    await waitFor(() => /server: stopping/.test(server.output()), "the stop");
    await using ingest = startFakeIngest({}, port);
    await stopped(server);
    const { tunnel, server: errors } = await arrived(ingest);
    assertSentInOrder(tunnel, Array.from({ length: 20 }, (_, i) => i));
    assert.equal(errors.length, 3);
    assert.doesNotMatch(server.output(), /not sent before shutdown/);
  } finally {
    await server.stop("SIGKILL");
  }
});

Deno.test("twice the queue's size during an outage: RSS within the bound, 503 past it, each 200 arrives once, the rest as a client report", async () => {
  const port = closedPort();
  const dsn = `http://key@127.0.0.1:${port}/7`;
  const QUEUE_MIB = 8;
  const server = await startFixtureServer({
    TUNNEL_ALLOWED_DSNS: dsn,
    TUNNEL_RATE_LIMIT: "0",
    DELIVERY_QUEUE_BYTES: String(QUEUE_MIB * 1024 * 1024),
  });
  try {
    const before = (await memory(server.process.pid)).rss;
    const statuses: number[] = [];
    for (let i = 0; i < 2 * QUEUE_MIB * 10; i++) {
      const res = await post(server.url, envelope(dsn, i, 100 * 1024));
      statuses.push(res.status);
      if (res.status === 503) assert.match(res.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
    }
    const after = (await memory(server.process.pid)).rss;
    const queued = statuses.indexOf(503);
    // 8 MiB holds 81 of these (100 KiB and 1 KiB of bookkeeping each).
    assert.ok(queued >= 75 && queued <= 81, `${queued} queued`);
    assert.deepEqual(statuses.slice(queued), Array(statuses.length - queued).fill(503));
    // The documented bound: the queue's bytes, plus up to 48 MiB of bodies read but not yet
    // collected (V8 frees an ArrayBuffer at its next GC; measured +25 to +46 MiB here).
    assert.ok(
      after - before < QUEUE_MIB + 48,
      `RSS ${before.toFixed(1)} -> ${after.toFixed(1)} MiB`,
    );
    await using ingest = startFakeIngest({}, port);
    await waitFor(() => ingest.requests.length >= queued + 1, "the queued envelopes and a report");
    const { tunnel, reports } = await arrived(ingest);
    assertSentInOrder(tunnel, statuses.slice(0, queued).map((_, i) => i));
    assert.deepEqual(reports, [
      { reason: "queue_overflow", category: "error", quantity: statuses.length - queued },
    ]);
  } finally {
    await server.stop("SIGKILL");
  }
});
