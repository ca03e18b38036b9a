/**
 * The tunnel's answers when the ingest answers or fails: relayed status and rate-limit headers,
 * no HTML from the ingest, 502 when unreachable or redirecting, 504 when too slow.
 */
import assert from "node:assert/strict";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import { HELD_MS, holdTimers } from "../../support/held_timers.ts";
import {
  assertOneLineReason,
  buildEnvelope,
  chunkedStream,
  closedPort,
  encoder,
  MiB,
  post,
  randomBytes,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

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

test("502 when the ingest is unreachable", async () => {
  const dsn = `http://public@127.0.0.1:${closedPort()}/1`;
  await using tunnel = startTunnel([dsn]);
  const answer = await post(tunnel.url, buildEnvelope(dsn, randomBytes(10)));
  assertOneLineReason(answer, 502, /unreachable/);
  assert.deepEqual(tunnel.logs.map((l) => l.status), [502]);
});

test("504 when the ingest answers too late", async () => {
  const late = Promise.withResolvers<void>();
  await using ingest = startFakeIngest({ hold: late.promise });
  await using tunnel = startTunnel([ingest.dsn()], { timeoutMs: HELD_MS });
  using deadline = holdTimers(HELD_MS);
  const answering = post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
  // The whole envelope is at the ingest, which holds its answer: only then the deadline passes.
  await ingest.waitFor(1, "complete");
  assert.equal(deadline.pending, 1);
  deadline.fire();
  assertOneLineReason(await answering, 504);
  late.resolve();
  assert.deepEqual(tunnel.logs.map((l) => l.status), [504]);
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

test("a streamed upload whose ingest breaks off mid-body is a 502, not the client's fault", async () => {
  // The ingest takes the request head and a little of the body, then closes with the rest
  // unread (a reset), as a crashing ingest or a proxy in front of it does.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const broke = (async () => {
    const conn = await listener.accept();
    await conn.read(new Uint8Array(64 * 1024));
    conn.close();
  })();
  const dsn = `http://public@127.0.0.1:${listener.addr.port}/1`;
  try {
    await using tunnel = startTunnel([dsn]);
    const answer = await post(tunnel.url, chunkedStream(buildEnvelope(dsn, randomBytes(MiB))));
    assertOneLineReason(answer, 502, /unreachable/);
    assert.deepEqual(tunnel.logs.map((l) => l.status), [502]);
  } finally {
    await broke;
    listener.close();
  }
});

test("an ingest status a Response cannot carry (600-999) is a 502, not a 500", async () => {
  // Deno's fetch passes on any three-digit status; `new Response` takes 200-599 only.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const dsn = `http://public@127.0.0.1:${listener.addr.port}/1`;
  const answers = [[600, "application/json"], [999, "text/plain"]] as const;
  const served = (async () => {
    for (const [status, type] of answers) {
      const conn = await listener.accept();
      await conn.read(new Uint8Array(64 * 1024)); // the small envelope, whole
      const head = `HTTP/1.1 ${status} Odd\r\ncontent-type: ${type}\r\ncontent-length: 10\r\n` +
        "connection: close\r\n\r\n";
      await conn.write(encoder.encode(`${head}{"id":"1"}`));
      conn.close();
    }
  })();
  try {
    await using tunnel = startTunnel([dsn]);
    for (const _ of answers) {
      const answer = await post(tunnel.url, buildEnvelope(dsn, randomBytes(10)));
      assertOneLineReason(answer, 502, /invalid status/);
    }
    assert.deepEqual(tunnel.logs.map((l) => l.status), [502, 502]);
  } finally {
    listener.close(); // a failed assertion must not leave the script waiting to accept
    await served.catch(() => {});
  }
});
