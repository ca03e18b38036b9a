/**
 * The tunnel under load: many envelopes at once each arrive exactly once.
 */
import assert from "node:assert/strict";
import { sha256Hex, startFakeIngest } from "../../support/fake_ingest.ts";
import {
  buildEnvelope,
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
