/**
 * The tunnel against clients that send too much, too slowly or leave: 413 without reading the
 * rest, 408 on a stall, and a short or aborted upload is never forwarded as complete.
 */
import assert from "node:assert/strict";
import { createTunnelHandler } from "../../../server/tunnel/handler.ts";
import { createBodyBudget } from "../../../server/http/body_budget.ts";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import {
  assertOneLineReason,
  buildEnvelope,
  chunkedStream,
  defaultBodies,
  encoder,
  eventually,
  type LogLine,
  MiB,
  mustParse,
  post,
  randomBytes,
  rawExchange,
  recordingRefusals,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

test("413 from Content-Length alone, without waiting for the body", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()], { maxBodyBytes: 1 * MiB });
  const head = buildEnvelope(ingest.dsn(), randomBytes(10)).subarray(0, 100);
  const { status } = await rawExchange(tunnel.port, [
    encoder.encode(
      "POST /monitoring HTTP/1.1\r\nHost: app\r\nContent-Length: 100000000\r\n\r\n",
    ),
    head, // and never the other 99.99 MB
  ]);
  assert.equal(status, 413);
  assert.equal(ingest.started, 0);
  assert.deepEqual(tunnel.logs, [{
    reason: `envelope larger than ${MiB} bytes`,
    status: 413,
    bytes: 100_000_000,
  }]);
});

test("413 as soon as a chunked body passes the cap; the upstream request is aborted", async () => {
  await using ingest = startFakeIngest();
  const cap = 256 * 1024;
  await using tunnel = startTunnel([ingest.dsn()], { maxBodyBytes: cap });
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(cap + 64 * 1024));
  const chunks = [
    encoder.encode("POST /monitoring HTTP/1.1\r\nHost: app\r\nTransfer-Encoding: chunked\r\n\r\n"),
  ];
  for (let i = 0; i < envelope.byteLength; i += 16 * 1024) {
    const part = envelope.subarray(i, i + 16 * 1024);
    chunks.push(
      encoder.encode(`${part.byteLength.toString(16)}\r\n`),
      part,
      encoder.encode("\r\n"),
    );
  }
  // No terminating 0-chunk: a tunnel that waited for the end of the body would never answer.
  const { status } = await rawExchange(tunnel.port, chunks);
  assert.equal(status, 413);
  await eventually(() => tunnel.logs.length === 1, "the log line");
  assert.equal(tunnel.logs[0].status, 413);
  await ingest.waitFor(ingest.started, "settled");
  assert.equal(ingest.requests.length, 0, "no envelope may arrive complete");
});

test("413 for an endless fetch body stream, which is not read to its end", async () => {
  await using ingest = startFakeIngest();
  const cap = 512 * 1024;
  await using tunnel = startTunnel([ingest.dsn()], { maxBodyBytes: cap });
  const head = buildEnvelope(ingest.dsn(), randomBytes(10));
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = pulled === 0 ? head : randomBytes(64 * 1024);
      pulled += chunk.byteLength;
      controller.enqueue(chunk);
      if (pulled > 64 * MiB) controller.close(); // a safety net for a broken tunnel
    },
  });
  const answer = await post(tunnel.url, body);
  assertOneLineReason(answer, 413);
  assert.ok(pulled < 32 * MiB, `pulled ${pulled} bytes`);
  await ingest.waitFor(ingest.started, "settled");
  assert.equal(ingest.requests.length, 0);
});

// Bodies cut 300 ms after a read began waiting, or 150 ms (the grace) plus their minimum-rate time.
const quickBudget = () =>
  createBodyBudget({
    readTimeoutMs: 300,
    minRate: 8192,
    memoryBytes: 64 * MiB,
    clientLimits: false,
  });

test("408 when the client stalls before the header line is complete", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()], { bodies: quickBudget() });
  const release = Promise.withResolvers<void>();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      controller.enqueue(encoder.encode(`{"dsn":"${ingest.dsn()}"`));
      await release.promise;
      controller.close();
    },
  });
  const answer = await post(tunnel.url, body);
  release.resolve();
  assertOneLineReason(answer, 408);
  assert.equal(ingest.started, 0);
});

test("408 when a small body with a Content-Length stops arriving", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()], { bodies: quickBudget() });
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(1000));
  const { status } = await rawExchange(tunnel.port, [
    encoder.encode(`POST /monitoring HTTP/1.1\r\nHost: app\r\nContent-Length: 1100\r\n\r\n`),
    envelope.subarray(0, 500), // the header line and a bit, then nothing more
  ]);
  assert.equal(status, 408);
  assert.equal(ingest.started, 0);
});

test("a body shorter than its Content-Length is never forwarded as complete", async () => {
  // Deno's HTTP server already refuses such a body; this covers a handler called directly
  // with a Request built in code (tests, wrappers), where nothing else checks.
  await using ingest = startFakeIngest();
  const logs: LogLine[] = [];
  const handler = recordingRefusals(
    createTunnelHandler({
      allowedDsns: [mustParse(ingest.dsn())],
      maxBodyBytes: MiB,
      trustProxy: false,
      bodies: defaultBodies(),
    }),
    logs,
  );
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(100));
  for (const length of [envelope.byteLength + 50, 200_000]) {
    const request = new Request("http://app/monitoring", {
      method: "POST",
      headers: { "content-length": String(length) },
      body: chunkedStream(envelope, 50),
      duplex: "half",
    } as RequestInit);
    const response = await handler(request, {
      remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
      completed: Promise.resolve(),
    });
    assert.ok(response.status >= 400 && response.status < 500, String(response.status));
    await response.body?.cancel();
  }
  assert.equal(logs.length, 2);
  assert.equal(ingest.requests.length, 0);
});

test("a client that leaves halfway through a small body: logged, nothing forwarded", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(1000));
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: tunnel.port });
  await conn.write(encoder.encode(
    `POST /monitoring HTTP/1.1\r\nHost: app\r\nContent-Length: ${envelope.byteLength}\r\n\r\n`,
  ));
  await conn.write(envelope.subarray(0, 500));
  conn.close();
  await eventually(() => tunnel.logs.length === 1, "the log line");
  assert.match(String(tunnel.logs[0].reason), /client closed/);
  assert.equal(ingest.started, 0);
});

test("a client that aborts mid-upload: logged, nothing queued or forwarded", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(1 * MiB));
  const controller = new AbortController();
  const aborted = Promise.withResolvers<void>();
  controller.signal.addEventListener("abort", () => aborted.resolve());
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(stream) {
      if (!sent) {
        sent = true;
        stream.enqueue(envelope.slice(0, 200 * 1024));
        return;
      }
      await eventually(() => tunnel.requests === 1, "the upload at the tunnel");
      controller.abort();
      await aborted.promise;
      stream.close();
    },
  });
  await assert.rejects(
    fetch(
      tunnel.url,
      { method: "POST", body, signal: controller.signal, duplex: "half" } as RequestInit,
    ),
  );
  await eventually(() => tunnel.logs.length === 1, "the log line");
  assert.match(String(tunnel.logs[0].reason), /client closed/);
  assert.equal(tunnel.delivery.held.envelopes, 0);
  assert.equal(ingest.started, 0);
});
