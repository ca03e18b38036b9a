/**
 * The tunnel end to end on loopback (browser-side fetch -> tunnel -> fake ingest): envelopes
 * are forwarded byte for byte, whole when small and streamed when large, with the client's
 * address in X-Sentry-Forwarded-For; a fetch that fails with a bug rethrows it.
 */
import assert from "node:assert/strict";
import { createTunnelHandler } from "../../../server/tunnel/handler.ts";
import { createDeliveryQueue } from "../../../server/delivery/queue.ts";
import { parseDsn } from "../../../server/dsn.ts";
import { sha256Hex, startFakeIngest } from "../../support/fake_ingest.ts";
import { exchangeRaw } from "../../support/raw_exchange.ts";
import {
  buildEnvelope,
  chunkedStream,
  defaultBodies,
  MiB,
  post,
  randomBytes,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

test("forwards envelopes byte for byte, sent with Content-Length and chunked", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const sizes = [1, 1000, 70_000, 1 * MiB, 4 * MiB + 17];
  const expected: string[] = [];
  for (const size of sizes) {
    for (const chunked of [false, true]) {
      const envelope = buildEnvelope(ingest.dsn(), randomBytes(size));
      const answer = await post(tunnel.url, chunked ? chunkedStream(envelope) : envelope, {
        "content-type": "text/plain;charset=UTF-8",
        // A byte over 0x7f (é) must reach the ingest as the same byte.
        "user-agent": "tunnel-test/1.0 caf\u00e9",
      });
      assert.equal(answer.status, 200, `${size} ${chunked}: ${answer.text}`);
      assert.equal(answer.text, "{}"); // as Sentry answers, once the envelope is queued
      assert.equal(answer.headers.get("content-type"), "application/json");
      expected.push(await sha256Hex(envelope));
    }
  }
  await tunnel.delivery.flush(10_000);
  // Sent in arrival order, several at once while live: sorted, each once.
  assert.deepEqual(ingest.requests.map((r) => r.sha256).toSorted(), expected.toSorted());
  for (const request of ingest.requests) {
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/api/1/envelope/");
    assert.equal(request.headers.get("content-type"), "application/x-sentry-envelope");
    assert.equal(request.headers.get("user-agent"), "tunnel-test/1.0 caf\u00e9");
    assert.equal(request.headers.get("x-sentry-forwarded-for"), "127.0.0.1");
    assert.equal(request.headers.get("content-encoding"), null);
  }
  const envelopes = await ingest.envelopes();
  const lengths = envelopes.map(([, items]) => (items[0][1] as Uint8Array).byteLength);
  assert.deepEqual(lengths.toSorted((a, b) => a - b), sizes.flatMap((size) => [size, size]));
  assert.deepEqual(tunnel.logs, [], "no log line for a success");
});

test("small envelopes reach the ingest whole, with a Content-Length", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(2000));
  assert.equal((await post(tunnel.url, chunkedStream(envelope, 300))).status, 200);
  await tunnel.delivery.flush(10_000);
  assert.equal(ingest.requests[0].headers.get("content-length"), String(envelope.byteLength));
});

test("a Content-Length sent twice with one value is that length, beside a stalled chunked upload", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const encoder = new TextEncoder();
  const stalled = await Deno.connect({ hostname: "127.0.0.1", port: tunnel.port });
  try {
    await stalled.write(encoder.encode(
      "POST /monitoring HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
        `${(100).toString(16)}\r\n{"dsn":"${ingest.dsn()}"}\n`,
    ));
    const envelope = buildEnvelope(ingest.dsn(), randomBytes(500));
    const length = envelope.byteLength;
    for (const [first, second] of [[`${length}`, `${length}`], [`${length}`, `0${length}`]]) {
      const head = `POST /monitoring HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
        `Content-Length: ${first}\r\nContent-Length: ${second}\r\n\r\n`;
      const outcome = await exchangeRaw(tunnel.port, [encoder.encode(head), envelope], 3_000);
      assert.equal(outcome.kind === "response" && outcome.status, 200, JSON.stringify(outcome));
    }
    // The stalled upload is not forwarded: its body neither ends nor passes 64 KiB.
    await tunnel.delivery.flush(10_000);
    assert.deepEqual(ingest.requests.map((r) => r.sha256), [
      await sha256Hex(envelope),
      await sha256Hex(envelope),
    ]);
  } finally {
    stalled.close();
  }
});

test("a header line sent one byte at a time is still found", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(100));
  const answer = await post(tunnel.url, chunkedStream(envelope, 1));
  assert.equal(answer.status, 200, answer.text);
  await tunnel.delivery.flush(10_000);
  assert.equal(ingest.requests[0].sha256, await sha256Hex(envelope));
});

test("X-Sentry-Forwarded-For comes from the socket unless the proxy is trusted", async () => {
  await using ingest = startFakeIngest();
  // What the client wrote, then what the proxy appended (nginx's $proxy_add_x_forwarded_for).
  const forwarded = { "x-forwarded-for": "198.51.100.9, 203.0.113.7" };
  {
    await using tunnel = startTunnel([ingest.dsn()]);
    await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)), forwarded);
    await tunnel.delivery.flush(10_000);
  }
  {
    await using tunnel = startTunnel([ingest.dsn()], { trustProxy: true });
    await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)), forwarded);
    await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)), {
      "x-forwarded-for": "10.0.0.1, <script>",
    });
    await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)), {
      "x-forwarded-for": "2001:db8::1",
    });
    await tunnel.delivery.flush(10_000);
  }
  // Sorted: the queue sends several at once, so arrival order may differ from the posts'.
  const forwardedFor = ingest.requests.map((r) => r.headers.get("x-sentry-forwarded-for"));
  assert.deepEqual(forwardedFor.toSorted(), [
    "127.0.0.1",
    "127.0.0.1",
    "2001:db8::1",
    "203.0.113.7",
  ]);
});

test("a small envelope is read whole without building its body stream", async () => {
  await using ingest = startFakeIngest();
  const dsns = [parseDsn(ingest.dsn())!];
  const delivery = createDeliveryQueue({ dsns, maxBytes: MiB, maxAgeMs: 60_000 });
  const tunnel = createTunnelHandler({
    delivery,
    allowedDsns: dsns,
    maxBodyBytes: MiB,
    trustProxy: false,
    bodies: defaultBodies(),
  });
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(2000));
  const req = new Request("http://127.0.0.1/monitoring", {
    method: "POST",
    headers: { "content-length": String(envelope.byteLength) },
    body: envelope,
  });
  // `req.body` builds a ReadableStream that arrayBuffer() then drains chunk by chunk.
  let bodyReads = 0;
  const body = Object.getOwnPropertyDescriptor(Request.prototype, "body")!.get!;
  Object.defineProperty(req, "body", { get: () => (bodyReads++, body.call(req)) });
  const info = { remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 } };
  const res = await tunnel(req, info as unknown as Deno.ServeHandlerInfo);
  await res.body?.cancel();
  assert.equal(res.status, 200);
  assert.equal(bodyReads, 0);
  await delivery.drain(5_000);
  assert.equal(ingest.requests[0].sha256, await sha256Hex(envelope));
});

test("with several allowed DSNs, each envelope goes to its own project's URL", async () => {
  await using ingest = startFakeIngest();
  const dsns = [
    ingest.dsn("public", "1"),
    ingest.dsn("other", "7", "/relay"),
    ingest.dsn("k", "9"),
  ];
  await using tunnel = startTunnel(dsns);
  // Interleaved, whole and chunked, so neither a first DSN nor a last one can stand for all.
  const order = [2, 0, 1, 1, 2, 0];
  for (const [i, which] of order.entries()) {
    const envelope = buildEnvelope(dsns[which], randomBytes(100));
    const answer = await post(tunnel.url, i % 2 === 0 ? envelope : chunkedStream(envelope));
    assert.equal(answer.status, 200, answer.text);
  }
  const paths = ["/api/1/envelope/", "/relay/api/7/envelope/", "/api/9/envelope/"];
  await tunnel.delivery.flush(10_000);
  const sent = order.map((which) => paths[which]);
  assert.deepEqual(ingest.requests.map((r) => r.path).toSorted(), sent.toSorted());
});
