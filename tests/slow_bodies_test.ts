/**
 * Slow request bodies against the fixture app in its own process (TRUST_PROXY on, clients stood in
 * by X-Forwarded-For), all at once so the file takes as long as its slowest upload (~95 s):
 * bodies sent at 2 bytes a second from two addresses, or from the honest client's own, delay
 * no honest API write or envelope past a 1 s deadline; a 6 MB envelope at 64 KB/s is delivered;
 * a byte every 10 s, and a body under the minimum rate, end with 408. Deadlines are counted.
 */
import assert from "node:assert/strict";
import { BODY_DEFAULTS, MAX_CLIENT_BODIES } from "../server/http/body_budget.ts";
import { sha256Hex, startFakeIngest } from "./support/fake_ingest.ts";
import { parseResponseHead } from "./support/raw_exchange.ts";
import { type RunningServer, startFixtureServer } from "./support/server.ts";
import { buildEnvelope, concat, randomBytes } from "./support/tunnel_upload.ts";

const encoder = new TextEncoder();

/** Resolves after `ms`, or at once when `signal` aborts; its timer never outlives it. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => (clearTimeout(timer), signal.removeEventListener("abort", done), resolve());
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/** What became of a trickled upload: the answer's status (0: none) and the body bytes sent. */
interface Trickled {
  status: number;
  sent: number;
}

/**
 * POST `body` over a raw socket from `client` (X-Forwarded-For), `piece` bytes every `everyMs`,
 * until it is all sent and answered, the server answers first, or `stop` aborts.
 */
async function trickle(
  port: number,
  target: string,
  client: string,
  body: Uint8Array,
  piece: number,
  everyMs: number,
  stop: AbortSignal,
): Promise<Trickled> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const result: Trickled = { status: 0, sent: 0 };
  const answered = new AbortController();
  const reading = (async () => {
    let received = new Uint8Array(0);
    for await (const chunk of conn.readable) {
      received = concat([received, chunk]);
      const head = parseResponseHead(received);
      if (typeof head === "object") return result.status = head.status;
    }
  })().catch(() => {}).finally(() => answered.abort());
  const over = AbortSignal.any([stop, answered.signal]);
  try {
    const head = `POST ${target} HTTP/1.1\r\nHost: a\r\nX-Forwarded-For: ${client}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.byteLength}\r\n\r\n`;
    await conn.write(encoder.encode(head));
    while (!over.aborted && result.sent < body.byteLength) {
      const next = body.subarray(result.sent, result.sent + piece);
      for (let n = 0; n < next.byteLength;) n += await conn.write(next.subarray(n));
      result.sent += next.byteLength;
      if (result.sent < body.byteLength) await pause(everyMs, over);
    }
    await pause(60_000, over); // for the answer
  } catch {
    /* the server closed the connection after its answer */
  } finally {
    try {
      conn.close();
    } catch { /* closed at the end of its answer */ }
    await reading;
  }
  return result;
}

/** POST `body` as `client`; the status, and whether it came within 1 s (counted, not timed). */
async function honest(
  url: string,
  client: string,
  body: Uint8Array<ArrayBuffer>,
): Promise<[number, boolean]> {
  let late = false;
  const timer = setTimeout(() => late = true, 1_000);
  try {
    const headers = { "content-type": "application/json", "x-forwarded-for": client };
    const res = await fetch(url, { method: "POST", headers, body });
    await res.body?.cancel();
    return [res.status, !late];
  } finally {
    clearTimeout(timer);
  }
}

/**
 * 24 slow bodies (12 from each of `slowClients`) to `target` at 2 bytes a second; once they
 * have stalled 2.5 s (half way to their cut), 20 honest POSTs from `honestClient`, one after another.
 */
async function slowNeighbours(
  server: RunningServer,
  target: string,
  slowClients: [string, string],
  honestClient: string,
  body: () => Uint8Array<ArrayBuffer>,
) {
  const port = Number(new URL(server.url).port);
  const stop = new AbortController();
  const slow = Array.from(
    { length: 24 },
    (_, i) => trickle(port, target, slowClients[i % 2], body(), 2, 1_000, stop.signal),
  );
  const answers: [number, boolean][] = [];
  await pause(2_500, new AbortController().signal);
  try {
    for (let i = 0; i < 20; i++) {
      answers.push(await honest(server.url + target.slice(1), honestClient, body()));
    }
  } finally {
    stop.abort();
  }
  const ended = await Promise.all(slow);
  return { answers, ended };
}

const jsonBody = () => encoder.encode(JSON.stringify({ pad: "x".repeat(888) })); // 900 bytes

Deno.test({
  name:
    "slow bodies hold no honest client past 1 s; a 6 MB envelope at 64 KB/s arrives; trickles get 408",
  sanitizeResources: false, // the child's pipes are closed by stop()
  async fn() {
    await using ingest = startFakeIngest();
    const dsn = ingest.dsn();
    const server = await startFixtureServer({ TUNNEL_ALLOWED_DSNS: dsn, TRUST_PROXY: "true" });
    const port = Number(new URL(server.url).port);
    const never = new AbortController().signal;
    const envelope = () => buildEnvelope(dsn, randomBytes(100_000));
    try {
      const large = buildEnvelope(dsn, randomBytes(6_000_000));
      const [apiApart, apiShared, tunnelApart, tunnelShared, feedback, oneByte, belowRate] =
        await Promise.all([
          slowNeighbours(server, "/api/echo", ["10.0.1.1", "10.0.1.2"], "10.0.1.3", jsonBody),
          slowNeighbours(server, "/api/echo", ["10.0.2.1", "10.0.2.1"], "10.0.2.1", jsonBody),
          slowNeighbours(server, "/monitoring", ["10.0.3.1", "10.0.3.2"], "10.0.3.3", envelope),
          slowNeighbours(server, "/monitoring", ["10.0.4.1", "10.0.4.1"], "10.0.4.1", envelope),
          // 16 KiB every 250 ms: 64 KiB a second, 92 s for the whole.
          trickle(port, "/monitoring", "10.0.5.1", large, 16 * 1024, 250, never),
          // A byte every 10 s: cut after the grace (half the read timeout), before the second.
          trickle(port, "/monitoring", "10.0.6.1", envelope(), 1, 10_000, never),
          // 1 KiB every 250 ms, half the minimum rate: behind it after twice the grace.
          trickle(port, "/monitoring", "10.0.7.1", envelope(), 1024, 250, never),
        ]);
      for (
        const [name, { answers, ended }] of Object.entries({
          apiApart,
          apiShared,
          tunnelApart,
          tunnelShared,
        })
      ) {
        assert.deepEqual(answers, Array(20).fill([200, true]), name);
        // The slow ones got no further than the 408 of their pace, or a 503 past their places.
        const statuses = new Set(ended.map((e) => e.status));
        assert.ok([...statuses].every((s) => s === 408 || s === 503 || s === 0), name);
        // Per client, at most MAX_CLIENT_BODIES of the 12 (or 24) were read at once.
        const busy = ended.filter((e) => e.status === 503).length;
        assert.ok(busy >= 24 - (name.endsWith("Shared") ? 1 : 2) * MAX_CLIENT_BODIES, name);
      }
      assert.equal(feedback.status, 200);
      assert.equal(feedback.sent, large.byteLength);
      // Answered once queued: the queue delivers it after (polled, at most 10 s).
      const whole = await sha256Hex(large);
      const arrived = () => ingest.requests.some((r) => r.sha256 === whole);
      for (let polls = 0; polls < 100 && !arrived(); polls++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.ok(arrived(), "the 6 MB envelope arrived whole");
      assert.deepEqual(oneByte, { status: 408, sent: 1 });
      assert.equal(belowRate.status, 408);
      // Cut by the rate (after about 40 KB), not by the read timeout, nor allowed to the end.
      const grace = BODY_DEFAULTS.readTimeoutMs / 2;
      assert.ok(belowRate.sent > grace * 4, `${belowRate.sent} bytes sent`);
      assert.ok(belowRate.sent < 100_000, `${belowRate.sent} bytes sent`);
    } finally {
      await server.stop();
    }
  },
});
