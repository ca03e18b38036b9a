/**
 * The tunnel under load: many envelopes at once each arrive exactly once, and large uploads
 * are read at most maxLargeBodies at a time.
 */
import assert from "node:assert/strict";
import { sha256Hex, startFakeIngest } from "../../support/fake_ingest.ts";
import {
  buildEnvelope,
  eventually,
  post,
  randomBytes,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

test("1,000 envelopes at 50 concurrent each arrive exactly once, byte for byte", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelopes = Array.from(
    { length: 1000 },
    (_, i) => buildEnvelope(ingest.dsn(), randomBytes(200 + (i * 37) % 8000)),
  );
  const sent = await Promise.all(envelopes.map(sha256Hex));
  let next = 0;
  const statuses: number[] = [];
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < envelopes.length) {
      const envelope = envelopes[next++];
      statuses.push((await post(tunnel.url, envelope)).status);
    }
  }));
  assert.deepEqual(new Set(statuses), new Set([200]));
  assert.equal(statuses.length, 1000);
  await tunnel.delivery.flush(10_000);
  const received = ingest.requests.map((r) => r.sha256);
  assert.deepEqual(received.toSorted(), sent.toSorted());
  assert.equal(new Set(received).size, 1000);
  assert.deepEqual(tunnel.logs, []);
});

test("a client's idle uploads hold at most half the large-body slots: others still get through", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()], {
    maxLargeBodies: 2,
    rateLimit: 600,
    trustProxy: true,
    timeoutMs: 5_000,
  });
  // Two uploads from one address send 100 KiB (enough to be streamed on) and then nothing.
  const stop = new AbortController();
  const idle = Array.from({ length: 2 }, () => {
    const start = buildEnvelope(ingest.dsn(), randomBytes(100 * 1024));
    const body = new ReadableStream({ start: (controller) => controller.enqueue(start) });
    const init = {
      method: "POST",
      body,
      duplex: "half",
      signal: stop.signal,
      headers: { "x-forwarded-for": "198.51.100.1" },
    };
    return fetch(tunnel.url, init as RequestInit).then((res) => res.status, () => "aborted");
  });
  let idleEnded = false;
  Promise.all(idle).then(() => idleEnded = true);
  // The second one's head is read too: it asks for a slot before the other client does.
  await eventually(() => tunnel.requests === 2, "both idle uploads at the tunnel");

  const envelope = buildEnvelope(ingest.dsn(), randomBytes(100 * 1024));
  const answer = await post(tunnel.url, envelope, { "x-forwarded-for": "198.51.100.2" });
  assert.equal(answer.status, 200, answer.text);
  assert.equal(idleEnded, false, "the other client's upload waited for an idle one to time out");
  stop.abort();
  assert.deepEqual(await Promise.all(idle), ["aborted", "aborted"]);
});
