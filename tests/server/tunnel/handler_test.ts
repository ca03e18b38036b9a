/**
 * The tunnel end to end on loopback: browser-side fetch -> tunnel (Deno.serve) -> fake ingest.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { brotliCompressSync } from "node:zlib";
import { type Dsn, parseDsn, sameDsn } from "../../../server/tunnel/dsn.ts";
import { createTunnelHandler, type TunnelOptions } from "../../../server/tunnel/handler.ts";
import type { TunnelRecord } from "../../../server/tunnel/log.ts";
import { createIngestClient } from "../../../server/tunnel/ingest_client.ts";
import { sha256Hex, startFakeIngest } from "../../support/fake_ingest.ts";

const MiB = 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// helpers

// Deno 2 runs tests without the op and resource sanitizers unless asked. The tunnel promises
// that nothing leaks (timers, request bodies, upstream requests), so its tests ask.
function test(name: string, fn: () => Promise<void>) {
  Deno.test({ name, sanitizeOps: true, sanitizeResources: true, fn });
}

type LogLine = TunnelRecord;

interface Tunnel extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  readonly logs: LogLine[];
}

function startTunnel(allowed: readonly string[], options: Partial<TunnelOptions> = {}): Tunnel {
  const logs: LogLine[] = [];
  // The tunnel's own client, as in production, closed with the tunnel so no socket outlives it.
  const client = createIngestClient({ maxResponseBytes: 64 * 1024 });
  const handler = createTunnelHandler({
    allowedDsns: allowed.map(mustParse),
    maxBodyBytes: 8 * MiB,
    timeoutMs: 10_000,
    trustProxy: false,
    fetch: client.fetch,
    log: (fields) => logs.push(fields),
    ...options,
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  return {
    url: `http://127.0.0.1:${server.addr.port}/monitoring`,
    port: server.addr.port,
    logs,
    [Symbol.asyncDispose]: async () => {
      await server.shutdown();
      client.close();
    },
  };
}

function mustParse(dsn: string): Dsn {
  const parsed = parseDsn(dsn);
  if (parsed === null) throw new Error(`bad test DSN ${dsn}`);
  return parsed;
}

const encoder = new TextEncoder();

function randomBytes(length: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
  return bytes;
}

function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/** A valid envelope: header naming `dsn`, one attachment item holding `payload` (binary). */
function buildEnvelope(dsn: string, payload: Uint8Array): Uint8Array<ArrayBuffer> {
  const header = { event_id: crypto.randomUUID().replaceAll("-", ""), dsn, sent_at: "now" };
  const item = { type: "attachment", length: payload.byteLength, filename: "blob.bin" };
  return concat([
    encoder.encode(`${JSON.stringify(header)}\n${JSON.stringify(item)}\n`),
    payload,
  ]);
}

/** Serve `bytes` as a request body stream in chunks of random sizes up to `maxChunk`. */
function chunkedStream(bytes: Uint8Array, maxChunk = 64 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      const size = 1 + Math.floor(Math.random() * maxChunk);
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

async function post(url: string, body: BodyInit | null, headers: HeadersInit = {}) {
  const init = { method: "POST", body, headers, duplex: "half" } as RequestInit;
  const response = await fetch(url, init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function assertOneLineReason(answer: Answer, status: number, reason?: RegExp) {
  assert.equal(answer.status, status, answer.text);
  assert.match(answer.headers.get("content-type") ?? "", /^text\/plain/);
  assert.match(answer.text, /^[^\n]+\n$/);
  if (reason) assert.match(answer.text, reason);
}

async function gzip(bytes: Uint8Array<ArrayBuffer>, format: CompressionFormat = "gzip") {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream(format));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Poll until `check` holds (for effects that land after the response, like a log line). */
async function eventually(check: () => boolean, what: string, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Send raw bytes over a TCP connection and read one HTTP/1.1 response, without ever sending
 * more than `parts`: proves the server answers without waiting for the rest of a body.
 */
async function rawExchange(port: number, parts: Uint8Array[]): Promise<{ status: number }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const writing = (async () => {
    for (const part of parts) {
      for (let done = 0; done < part.byteLength;) done += await conn.write(part.subarray(done));
    }
  })().catch(() => {}); // the server may stop reading and close: that is the point
  const timer = setTimeout(() => conn.close(), 5_000);
  let text = "";
  try {
    const buffer = new Uint8Array(16 * 1024);
    while (!text.includes("\r\n\r\n")) {
      const n = await conn.read(buffer);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
  } catch {
    // closed by the timer: no response arrived in time
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* already closed by the timer */ }
  }
  await writing;
  const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
  if (!match) throw new Error(`no HTTP response within 5 s: ${JSON.stringify(text)}`);
  return { status: Number(match[1]) };
}

function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}

// ---------------------------------------------------------------------------------------------
// forwarding

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
        "user-agent": "tunnel-test/1.0",
      });
      assert.equal(answer.status, 200, `${size} ${chunked}: ${answer.text}`);
      assert.match(JSON.parse(answer.text).id, /^[0-9a-f]{32}$/);
      assert.equal(answer.headers.get("content-type"), "application/json");
      expected.push(await sha256Hex(envelope));
    }
  }
  assert.deepEqual(ingest.requests.map((r) => r.sha256), expected);
  for (const request of ingest.requests) {
    assert.equal(request.method, "POST");
    assert.equal(request.path, "/api/1/envelope/");
    assert.equal(request.headers.get("content-type"), "application/x-sentry-envelope");
    assert.equal(request.headers.get("user-agent"), "tunnel-test/1.0");
    assert.equal(request.headers.get("x-sentry-forwarded-for"), "127.0.0.1");
    assert.equal(request.headers.get("content-encoding"), null);
  }
  const envelopes = await ingest.envelopes();
  assert.deepEqual(envelopes.map(([, items]) => (items[0][1] as Uint8Array).byteLength), [
    ...sizes.flatMap((size) => [size, size]),
  ]);
  assert.deepEqual(tunnel.logs, [], "no log line for a success");
});

test("small envelopes reach the ingest whole, with a Content-Length", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(2000));
  assert.equal((await post(tunnel.url, chunkedStream(envelope, 300))).status, 200);
  assert.equal(ingest.requests[0].headers.get("content-length"), String(envelope.byteLength));
});

test("a large envelope streams: the ingest hears of it before the upload ends", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(2 * MiB));
  const split = 256 * 1024;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === 0) {
        controller.enqueue(envelope.slice(0, split));
        sent = split;
        return;
      }
      // Held back until the ingest has the request: a tunnel that buffers the whole body
      // first would never get here and the wait below would fail.
      await ingest.waitFor(1, "started", 5_000);
      controller.enqueue(envelope.slice(sent));
      controller.close();
    },
  });
  const answer = await post(tunnel.url, body);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(ingest.requests[0].sha256, await sha256Hex(envelope));
});

test("a header line sent one byte at a time is still found", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(100));
  const answer = await post(tunnel.url, chunkedStream(envelope, 1));
  assert.equal(answer.status, 200, answer.text);
  assert.equal(ingest.requests[0].sha256, await sha256Hex(envelope));
});

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
    assert.equal(ingest.requests.at(-1)!.sha256, await sha256Hex(body));
  }
});

test("a fetch that fails with a bug rethrows it (the app answers 500 and reports it)", async () => {
  const bug = new RangeError("bug, not a network failure");
  const dsn = "http://public@127.0.0.1:9/1";
  const logs: LogLine[] = [];
  const handler = createTunnelHandler({
    allowedDsns: [mustParse(dsn)],
    maxBodyBytes: MiB,
    timeoutMs: 5_000,
    trustProxy: false,
    fetch: () => Promise.reject(bug),
    log: (record) => logs.push(record),
  });
  const request = new Request("http://app/monitoring", {
    method: "POST",
    body: buildEnvelope(dsn, randomBytes(10)),
  });
  const info = {
    remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
    completed: Promise.resolve(),
  } as const;
  await assert.rejects(handler(request, info), (error) => error === bug);
  assert.deepEqual(logs, [], "a bug is not a refusal");
});

// ---------------------------------------------------------------------------------------------
// refusals

test("an envelope for a DSN that is not allowed is refused and goes nowhere", async () => {
  await using ingest = startFakeIngest();
  await using other = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn("public", "1", "/sentry")]);
  const allowed = ingest.dsn("public", "1", "/sentry");
  const refused = [
    other.dsn("public", "1", "/sentry"), // another server (port)
    ingest.dsn("public", "2", "/sentry"), // another project
    ingest.dsn("secret", "1", "/sentry"), // another key
    ingest.dsn("public", "1"), // no path prefix
    ingest.dsn("public", "1", "/other"), // another path prefix
    allowed.replace("http:", "https:"), // another protocol
    allowed.replace("127.0.0.1", "localhost"), // another host name, same machine
  ];
  for (const dsn of refused) {
    const answer = await post(tunnel.url, buildEnvelope(dsn, randomBytes(100)));
    assertOneLineReason(answer, 403, /not allowed/);
  }
  assert.equal(other.started, 0);
  assert.equal(ingest.started, 0);
  assert.equal(tunnel.logs.length, refused.length);
  assert.deepEqual(tunnel.logs[0], {
    msg: "tunnel",
    reason: "envelope DSN is not allowed here",
    status: 403,
    bytes: buildEnvelope(refused[0], randomBytes(100)).byteLength,
  });
  // The allowed one still works, and lands under its path prefix.
  assert.equal((await post(tunnel.url, buildEnvelope(allowed, randomBytes(10)))).status, 200);
  assert.equal(ingest.requests[0].path, "/sentry/api/1/envelope/");
});

test("malformed envelope headers are refused with a one-line reason", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const cases: [string, BodyInit | null, RegExp][] = [
    ["empty", null, /too long or missing/],
    ["no newline", `{"dsn":"${ingest.dsn()}"}`, /too long or missing/],
    ["long line", `{"dsn":"${ingest.dsn()}","p":"${"x".repeat(70_000)}"}\n`, /too long/],
    ["not JSON", "hello\n{}", /not JSON/],
    ["not object", "[1]\n", /not a JSON object/],
    ["no dsn", "{}\n", /no dsn/],
    ["dsn number", `{"dsn":5}\n`, /not a string/],
    ["dsn invalid", `{"dsn":"http://127.0.0.1/1"}\n`, /not a valid DSN/],
    ["bad UTF-8", new Uint8Array([0x7b, 0xc3, 0x28, 0x7d, 0x0a]), /UTF-8/],
  ];
  for (const [name, body, reason] of cases) {
    assertOneLineReason(await post(tunnel.url, body), 400, reason);
    assert.equal(tunnel.logs.at(-1)?.status, 400, name);
  }
  assert.equal(tunnel.logs.length, cases.length);
  assert.equal(ingest.started, 0);
});

test("answers 405 with Allow: POST to other methods, even called directly", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  for (const method of ["GET", "PUT", "DELETE", "OPTIONS"]) {
    const response = await fetch(tunnel.url, { method });
    const answer = {
      status: response.status,
      headers: response.headers,
      text: await response.text(),
    };
    assertOneLineReason(answer, 405);
    assert.equal(answer.headers.get("allow"), "POST");
  }
  // The handler is a plain function: no network needed.
  const handler = createTunnelHandler({
    allowedDsns: [mustParse(ingest.dsn())],
    maxBodyBytes: 1024,
    timeoutMs: 1000,
    trustProxy: false,
    log: () => {},
  });
  const info = {
    remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
    completed: Promise.resolve(),
  } as const;
  const response = await handler(new Request("http://app/monitoring"), info);
  assert.equal(response.status, 405);
  assert.equal(response.headers.get("allow"), "POST");
  await response.body?.cancel();
  assert.equal(ingest.started, 0);
});

test("answers 503 when no DSN is configured", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([]);
  const answer = await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
  assertOneLineReason(answer, 503, /no Sentry DSN configured/);
  assert.equal(ingest.started, 0);
  assert.equal(tunnel.logs.length, 1);
});

// ---------------------------------------------------------------------------------------------
// size limit

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
    msg: "tunnel",
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

// ---------------------------------------------------------------------------------------------
// upstream answers and failures

test("relays the ingest's 429 with only the allowed headers and a plain reason", async () => {
  await using ingest = startFakeIngest({
    status: 429,
    body: "rate limited",
    headers: {
      "content-type": "text/plain",
      "retry-after": "60",
      "x-sentry-rate-limits": "60:error;transaction:organization",
      "strict-transport-security": "max-age=31536000",
      "set-cookie": "session=abc; Path=/",
      "access-control-allow-origin": "*",
      "x-internal": "secret",
    },
  });
  await using tunnel = startTunnel([ingest.dsn()]);
  const answer = await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
  assertOneLineReason(answer, 429, /^ingest answered 429$/m);
  assert.equal(answer.headers.get("retry-after"), "60");
  assert.equal(answer.headers.get("x-sentry-rate-limits"), "60:error;transaction:organization");
  for (
    const dropped of ["strict-transport-security", "set-cookie", "access-control-allow-origin"]
  ) {
    assert.equal(answer.headers.get(dropped), null, dropped);
  }
  assert.equal(answer.headers.get("x-internal"), null);
  assert.equal(ingest.requests.length, 1);
  assert.deepEqual(tunnel.logs.map((l) => l.status), [429]);
});

test("an ingest that answers before taking the whole body: its answer is relayed", async () => {
  await using ingest = startFakeIngest({
    status: 413,
    skipBody: true,
    headers: { "retry-after": "1" },
    body: "too big",
  });
  await using tunnel = startTunnel([ingest.dsn()]);
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(2 * MiB));
  const answer = await post(tunnel.url, chunkedStream(envelope));
  assertOneLineReason(answer, 413, /ingest answered 413/);
  assert.equal(answer.headers.get("retry-after"), "1");
  assert.deepEqual(tunnel.logs.map((l) => l.status), [413]);
  assert.equal(ingest.requests.length, 0);
});

test("an ingest's HTML error page never reaches the app's origin; its JSON does", async () => {
  const html = "<html><script>alert(document.cookie)</script></html>";
  await using ingest = startFakeIngest({
    status: 502,
    body: html,
    headers: { "content-type": "text/html; charset=utf-8" },
  });
  await using tunnel = startTunnel([ingest.dsn()]);
  const refused = await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
  assertOneLineReason(refused, 502, /^ingest answered 502$/m);
  assert.ok(!refused.text.includes("<"));
  // A 200 that is not JSON is no Sentry answer either: its body is not relayed.
  ingest.reply({ status: 200, body: html, headers: { "content-type": "text/html" } });
  const odd = await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
  assertOneLineReason(odd, 200, /^ingest answered 200$/m);
  const detail = JSON.stringify({ detail: "event submission rejected" });
  ingest.reply({ status: 400, body: detail, headers: { "content-type": "application/json" } });
  const json = await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
  assert.equal(json.status, 400);
  assert.equal(json.text, detail);
  assert.equal(json.headers.get("content-type"), "application/json");
});

test("an upload cut short after the answer is never ended cleanly upstream", async () => {
  // Deno's fetch stops uploading once the answer is in; a fetch that keeps pulling the body
  // (a fake: no real one here behaves so) must see it fail, not end as if complete.
  const upstreamEnd = Promise.withResolvers<string>();
  const eagerFetch: typeof fetch = async (_url, init) => {
    const reader = (init?.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    (async () => {
      try {
        while (!(await reader.read()).done);
        return "closed";
      } catch {
        return "errored";
      }
    })().then(upstreamEnd.resolve);
    return new Response("slow down", { status: 429 });
  };
  const dsn = "http://public@127.0.0.1:9/1";
  await using tunnel = startTunnel([dsn], { fetch: eagerFetch });
  const envelope = buildEnvelope(dsn, randomBytes(1 * MiB));
  const answered = Promise.withResolvers<void>();
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent) {
        await answered.promise;
        controller.enqueue(envelope.slice(200 * 1024));
        return controller.close();
      }
      sent = true;
      controller.enqueue(envelope.slice(0, 200 * 1024));
    },
  });
  const answer = await post(tunnel.url, body);
  answered.resolve();
  assert.equal(answer.status, 429);
  assert.equal(await upstreamEnd.promise, "errored");
});

test("a body shorter than its Content-Length is never forwarded as complete", async () => {
  // Deno's HTTP server already refuses such a body; this covers a handler called directly
  // with a Request built in code (tests, wrappers), where nothing else checks.
  await using ingest = startFakeIngest();
  const logs: LogLine[] = [];
  const handler = createTunnelHandler({
    allowedDsns: [mustParse(ingest.dsn())],
    maxBodyBytes: MiB,
    timeoutMs: 5_000,
    trustProxy: false,
    log: (fields) => logs.push(fields),
  });
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

test("502 when the ingest is unreachable", async () => {
  const dsn = `http://public@127.0.0.1:${closedPort()}/1`;
  await using tunnel = startTunnel([dsn]);
  const answer = await post(tunnel.url, buildEnvelope(dsn, randomBytes(10)));
  assertOneLineReason(answer, 502, /unreachable/);
  assert.deepEqual(tunnel.logs.map((l) => l.status), [502]);
});

test("504 when the ingest answers too late", async () => {
  await using ingest = startFakeIngest({ delayMs: 5_000 });
  await using tunnel = startTunnel([ingest.dsn()], { timeoutMs: 300 });
  const answer = await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
  assertOneLineReason(answer, 504);
  assert.deepEqual(tunnel.logs.map((l) => l.status), [504]);
});

test("408 when the client stalls before the header line is complete", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()], { timeoutMs: 300 });
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
  await using tunnel = startTunnel([ingest.dsn()], { timeoutMs: 300 });
  const envelope = buildEnvelope(ingest.dsn(), randomBytes(1000));
  const { status } = await rawExchange(tunnel.port, [
    encoder.encode(`POST /monitoring HTTP/1.1\r\nHost: app\r\nContent-Length: 1100\r\n\r\n`),
    envelope.subarray(0, 500), // the header line and a bit, then nothing more
  ]);
  assert.equal(status, 408);
  assert.equal(ingest.started, 0);
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

test("a redirect from the ingest is not followed: 502", async () => {
  await using elsewhere = startFakeIngest();
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const location = `${elsewhere.url}/api/1/envelope/`;
  for (
    const reply of [{ redirectTo: location }, {
      status: 307,
      headers: { location },
      body: "moved ".repeat(10_000),
    }]
  ) {
    ingest.reply(reply);
    const answer = await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
    assertOneLineReason(answer, 502, /redirect/);
  }
  assert.equal(elsewhere.started, 0);
  assert.equal(tunnel.logs.length, 2);
});

test("a client that aborts mid-upload aborts the upstream request", async () => {
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
      await ingest.waitFor(1, "started");
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
  await ingest.waitFor(1, "settled");
  assert.equal(ingest.requests.length, 0, "the ingest must not get a complete envelope");
  assert.equal(ingest.incomplete, 1);
  await eventually(() => tunnel.logs.length === 1, "the log line");
  assert.match(String(tunnel.logs[0].reason), /client closed/);
});

test("X-Sentry-Forwarded-For comes from the socket unless the proxy is trusted", async () => {
  await using ingest = startFakeIngest();
  const forwarded = { "x-forwarded-for": "203.0.113.7, 10.0.0.1" };
  {
    await using tunnel = startTunnel([ingest.dsn()]);
    await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)), forwarded);
  }
  {
    await using tunnel = startTunnel([ingest.dsn()], { trustProxy: true });
    await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)), forwarded);
    await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)), {
      "x-forwarded-for": "<script>, 10.0.0.1",
    });
    await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)), {
      "x-forwarded-for": "2001:db8::1",
    });
  }
  assert.deepEqual(ingest.requests.map((r) => r.headers.get("x-sentry-forwarded-for")), [
    "127.0.0.1",
    "203.0.113.7",
    "127.0.0.1",
    "2001:db8::1",
  ]);
});

// ---------------------------------------------------------------------------------------------
// hostile input and load

test("fuzz: malformed headers and bodies are always a 4xx and never forwarded", async () => {
  await using ingest = startFakeIngest();
  const allowedDsn = ingest.dsn("public", "1");
  const allowed = mustParse(allowedDsn);
  await using tunnel = startTunnel([allowedDsn], { maxBodyBytes: 96 * 1024 });

  const nearMissDsn = fc.record({
    protocol: fc.constantFrom("http", "https", "ftp", "HTTP"),
    key: fc.constantFrom("public", "Public", "other", "", "pub lic"),
    host: fc.constantFrom("127.0.0.1", "localhost", "127.0.0.2", "[::1]", ""),
    port: fc.constantFrom(String(ingest.port), String(ingest.port + 1), "", "0", "99999"),
    prefix: fc.constantFrom("", "/x", "//", "/api"),
    project: fc.constantFrom("1", "2", "01", "", "1/", "a"),
  }).map(({ protocol, key, host, port, prefix, project }) =>
    `${protocol}://${key}@${host}${port ? `:${port}` : ""}${prefix}/${project}`
  ).filter((dsn) => {
    const parsed = parseDsn(dsn);
    return parsed === null || !sameDsn(parsed, allowed);
  });
  const dsnValue = fc.oneof(
    nearMissDsn,
    fc.string(),
    fc.webUrl(),
    fc.jsonValue().filter((v) => typeof v !== "string"),
  );
  const headerLine = fc.oneof(
    dsnValue.map((dsn) => JSON.stringify({ event_id: "x", dsn })),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string(),
    fc.string({ unit: "binary" }),
  ).map((line) => encoder.encode(line));
  const body = fc.oneof(
    fc.tuple(headerLine, fc.uint8Array({ maxLength: 4096 })).map(([line, rest]) =>
      concat([line, new Uint8Array([0x0a]), rest])
    ),
    fc.uint8Array({ maxLength: 4096 }),
    fc.uint8Array({ minLength: 100 * 1024, maxLength: 100 * 1024 }), // over the cap
  );
  const encoding = fc.constantFrom(undefined, "identity", "gzip", "deflate", "br", "nope");

  await fc.assert(
    fc.asyncProperty(body, encoding, fc.boolean(), async (bytes, contentEncoding, chunked) => {
      const headers: Record<string, string> = contentEncoding === undefined
        ? {}
        : { "content-encoding": contentEncoding };
      const answer = await post(tunnel.url, chunked ? chunkedStream(bytes, 512) : bytes, headers);
      assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.text}`);
      assertOneLineReason(answer, answer.status);
    }),
    { numRuns: 300 },
  );
  assert.equal(ingest.started, 0, "nothing may be forwarded");
});

test("fuzz: a DSN one or more fields off the allowed one is refused, never forwarded", async () => {
  await using ingest = startFakeIngest();
  await using other = startFakeIngest();
  const allowedDsn = ingest.dsn("public", "1", "/sentry");
  await using tunnel = startTunnel([allowedDsn]);
  const allowedParts = {
    protocol: "http",
    key: "public",
    host: "127.0.0.1",
    port: `:${ingest.port}`,
    prefix: "/sentry",
    project: "1",
  };
  // Most alternatives are valid DSNs aimed at a live loopback server, so a tunnel that let
  // one through would show it at once.
  const offFields = fc.record({
    protocol: fc.constantFrom("https", "ftp", "ws"),
    key: fc.constantFrom("Public", "other", "publi", "public2"),
    host: fc.constantFrom("localhost", "127.0.0.2", "[::1]", "127.0.0.1."),
    port: fc.constantFrom(`:${other.port}`, "", ":80"),
    prefix: fc.constantFrom("", "/other", "/sentry/x", "/Sentry"),
    project: fc.constantFrom("2", "11", "10"),
  }, { requiredKeys: [] }).filter((fields) => Object.keys(fields).length > 0);
  const dsn = offFields.map((fields) => {
    const p = { ...allowedParts, ...fields };
    return `${p.protocol}://${p.key}@${p.host}${p.port}${p.prefix}/${p.project}`;
  });
  await fc.assert(
    fc.asyncProperty(dsn, fc.uint8Array({ maxLength: 2048 }), fc.boolean(), async (d, p, c) => {
      const envelope = buildEnvelope(d, p);
      const answer = await post(tunnel.url, c ? chunkedStream(envelope, 700) : envelope);
      assert.ok([400, 403].includes(answer.status), `${d}: ${answer.status} ${answer.text}`);
      assertOneLineReason(answer, answer.status);
    }),
    { numRuns: 200 },
  );
  assert.equal(ingest.started + other.started, 0, "nothing may be forwarded");
});

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
  const received = ingest.requests.map((r) => r.sha256);
  assert.deepEqual(received.toSorted(), sent.toSorted());
  assert.equal(new Set(received).size, 1000);
  assert.deepEqual(tunnel.logs, []);
});

test("at most maxLargeBodies large uploads are read at once; the rest wait and arrive whole", async () => {
  // An ingest that holds each body after its first chunk until two are open at once, so a
  // tunnel that let more than two through would show it in `mostOpen`.
  let open = 0;
  let mostOpen = 0;
  let gate = Promise.withResolvers<void>();
  const received: string[] = [];
  const ingestServer = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const reader = req.body!.getReader();
      const parts: Uint8Array[] = [];
      const first = await reader.read();
      if (!first.done) parts.push(first.value);
      open++;
      mostOpen = Math.max(mostOpen, open);
      if (open === 2) {
        gate.resolve();
        gate = Promise.withResolvers<void>();
      } else await gate.promise;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
      }
      open--;
      received.push(await sha256Hex(concat(parts)));
      return Response.json({ id: "1" });
    },
  );
  try {
    const dsn = `http://public@127.0.0.1:${ingestServer.addr.port}/1`;
    await using tunnel = startTunnel([dsn], { maxLargeBodies: 2 });
    const envelopes = Array.from({ length: 6 }, () => buildEnvelope(dsn, randomBytes(MiB)));
    const answers = await Promise.all(envelopes.map((e) => post(tunnel.url, e)));
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200]);
    assert.equal(mostOpen, 2);
    const sent = await Promise.all(envelopes.map(sha256Hex));
    assert.deepEqual(received.toSorted(), sent.toSorted());
    assert.deepEqual(tunnel.logs, []);
  } finally {
    await ingestServer.shutdown();
  }
});
