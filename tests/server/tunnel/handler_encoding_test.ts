/**
 * The tunnel with compressed bodies (gzip, deflate, brotli): forwarded unchanged with their
 * Content-Encoding, judged by the decompressed header line, decompression bombs bounded.
 */
import assert from "node:assert/strict";
import { brotliCompressSync } from "node:zlib";
import { sha256Hex, startFakeIngest } from "../../support/fake_ingest.ts";
import {
  assertOneLineReason,
  buildEnvelope,
  chunkedStream,
  concat,
  encoder,
  gzip,
  MiB,
  post,
  randomBytes,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

test("a compressed body is forwarded unchanged with its Content-Encoding", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const cases: [string, CompressionFormat, number, boolean][] = [
    ["gzip", "gzip", 5000, false],
    ["deflate", "deflate", 5000, true],
    ["x-gzip", "gzip", 2 * MiB, true], // incompressible and large: streams
  ];
  const plain: Uint8Array[] = [];
  for (const [encoding, format, size, chunked] of cases) {
    const payload = randomBytes(size);
    plain.push(payload);
    const compressed = await gzip(buildEnvelope(ingest.dsn(), payload), format);
    const body = chunked ? chunkedStream(compressed, 8 * 1024) : compressed;
    const answer = await post(tunnel.url, body, { "content-encoding": encoding });
    assert.equal(answer.status, 200, `${encoding}: ${answer.text}`);
    await tunnel.delivery.flush(10_000);
    const received = ingest.requests.at(-1)!;
    assert.equal(received.sha256, await sha256Hex(compressed));
    assert.equal(received.headers.get("content-encoding"), encoding);
  }
  const envelopes = await ingest.envelopes();
  assert.deepEqual(envelopes.map(([, items]) => items[0][1]), plain);
});

test("a compressed body is judged by its decompressed header line", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const otherProject = await gzip(buildEnvelope(ingest.dsn("public", "2"), randomBytes(10)));
  assertOneLineReason(
    await post(tunnel.url, otherProject, { "content-encoding": "gzip" }),
    403,
  );
  const longLine = encoder.encode(`{"dsn":"${ingest.dsn()}","pad":"${"a".repeat(70_000)}"}\n{}`);
  assertOneLineReason(
    await post(tunnel.url, await gzip(longLine), { "content-encoding": "gzip" }),
    400,
    /too long or missing/,
  );
  const notGzip = buildEnvelope(ingest.dsn(), randomBytes(10));
  assertOneLineReason(
    await post(tunnel.url, notGzip, { "content-encoding": "gzip" }),
    400,
    /decompress/,
  );
  const truncated = (await gzip(buildEnvelope(ingest.dsn(), randomBytes(10)))).subarray(0, 12);
  assertOneLineReason(
    await post(tunnel.url, truncated, { "content-encoding": "gzip" }),
    400,
  );
  // Megabytes of zeros compress to a few KiB; the tunnel must give up after 64 KiB decoded.
  const bomb = await gzip(new Uint8Array(64 * MiB));
  assertOneLineReason(await post(tunnel.url, bomb, { "content-encoding": "gzip" }), 400);
  for (const encoding of ["zstd", "compress", "gzip, gzip"]) {
    const envelope = buildEnvelope(ingest.dsn(), randomBytes(10));
    assertOneLineReason(
      await post(tunnel.url, envelope, { "content-encoding": encoding }),
      415,
      /Content-Encoding/,
    );
  }
  assert.equal(ingest.started, 0);
  assert.equal(tunnel.logs.length, 8);
});

test("brotli bodies: forwarded unchanged when allowed, refused otherwise, bombs bounded", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  for (const [size, chunked] of [[3000, false], [2 * MiB, true]] as const) {
    const compressed = new Uint8Array(
      brotliCompressSync(buildEnvelope(ingest.dsn(), randomBytes(size))),
    );
    const body = chunked ? chunkedStream(compressed, 8 * 1024) : compressed;
    const answer = await post(tunnel.url, body, { "content-encoding": "br" });
    assert.equal(answer.status, 200, answer.text);
    await tunnel.delivery.flush(10_000);
    const received = ingest.requests.at(-1)!;
    assert.equal(received.sha256, await sha256Hex(compressed));
    assert.equal(received.headers.get("content-encoding"), "br");
  }
  const forwarded = ingest.requests.length;
  const br = (bytes: Uint8Array) => new Uint8Array(brotliCompressSync(bytes));
  const otherProject = br(buildEnvelope(ingest.dsn("public", "2"), randomBytes(10)));
  assertOneLineReason(await post(tunnel.url, otherProject, { "content-encoding": "br" }), 403);
  // 32 MiB of one byte compresses to a few bytes; decoding must stop at the header cap.
  const bomb = br(new Uint8Array(32 * MiB).fill(0x61));
  assert.ok(bomb.length < 64 * 1024);
  assertOneLineReason(await post(tunnel.url, bomb, { "content-encoding": "br" }), 400, /too long/);
  const notBrotli = buildEnvelope(ingest.dsn(), randomBytes(10));
  assertOneLineReason(await post(tunnel.url, notBrotli, { "content-encoding": "br" }), 400);
  await tunnel.delivery.flush(10_000);
  assert.equal(ingest.requests.length, forwarded, "nothing refused was forwarded");
});

test("compressed bodies sent one byte at a time are decoded once and forwarded", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(3000));
  const bodies: [string, Uint8Array<ArrayBuffer>][] = [
    ["gzip", await gzip(envelope)],
    ["deflate", await gzip(envelope, "deflate")],
    ["br", new Uint8Array(brotliCompressSync(envelope))],
  ];
  for (const [encoding, compressed] of bodies) {
    const answer = await post(tunnel.url, chunkedStream(compressed, 1), {
      "content-encoding": encoding,
    });
    assert.equal(answer.status, 200, `${encoding}: ${answer.text}`);
    await tunnel.delivery.flush(10_000);
    assert.equal(ingest.requests.at(-1)!.sha256, await sha256Hex(compressed));
  }
});

test("a gzip body of several members (RFC 1952) is accepted and forwarded as sent", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(500));
  // Split inside the header line, so the line is only whole across both members.
  const body = concat([await gzip(envelope.slice(0, 20)), await gzip(envelope.slice(20))]);
  for (const chunked of [false, true]) {
    const answer = await post(tunnel.url, chunked ? chunkedStream(body, 7) : body, {
      "content-encoding": "gzip",
    });
    assert.equal(answer.status, 200, answer.text);
    await tunnel.delivery.flush(10_000);
    assert.equal(ingest.requests.at(-1)!.sha256, await sha256Hex(body));
  }
});
