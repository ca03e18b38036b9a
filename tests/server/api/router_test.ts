import assert from "node:assert/strict";
import { defaultBodies } from "../../support/tunnel_upload.ts";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { apiRouteEntries } from "../../../server/api/router.ts";
import { fixtureApp } from "../../fixtures/app.ts";
import { FailureLog } from "../../../server/http/failure_log.ts";
import { FixtureApiError } from "../../fixtures/routes.tsx";

const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"];

Deno.test("an API route answers JSON through the app's chain: headers, log line, tracing", async () => {
  const { fetch, traced, logLines } = await fixtureApp();
  const res = await fetch("/api/hello", { headers: { "x-request-id": "api-hello-1" } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), { hello: "world" });
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(res.headers.get("x-request-id"), "api-hello-1");
  assert.deepEqual(traced, ["/api/hello"]);
  const log = JSON.parse(logLines.at(-1)!);
  assert.equal(log.path, "/api/hello");
  assert.equal(log.status, 200);
  assert.equal(log.requestId, "api-hello-1");
  const echo = await fetch("/api/echo", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: '{"a":[1]}',
  });
  assert.deepEqual(await echo.json(), { a: [1] });
});

Deno.test("a throwing API handler: generic JSON 500, one error event, one log entry, no detail", async () => {
  const { fetch, errors, failures } = await fixtureApp();
  const res = await fetch("/api/boom");
  assert.equal(res.status, 500);
  const body = await res.text();
  assert.deepEqual(JSON.parse(body), { error: "internal error" });
  assert.doesNotMatch(body, /fixture API route failed/);
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof FixtureApiError);
  assert.equal(failures.length, 1);
  assert.match(failures[0], /^request failed: \w*Error: fixture API route failed\n {4}at /);
});

Deno.test("monitoring that throws while reporting: still the API's JSON 500, and both logged", async () => {
  const { fetch, failures } = await fixtureApp({
    monitoring: {
      instrumentHandler: (handler) => handler,
      captureError: () => {
        throw new TypeError("the SDK choked");
      },
      traceMetaTags: () => "",
      flush: () => Promise.resolve(true),
    },
  });
  const res = await fetch("/api/boom");
  assert.equal(res.status, 500);
  assert.deepEqual(await res.json(), { error: "internal error" });
  assert.equal(failures.length, 2);
  assert.match(failures[0], /^request failed: \w*Error: fixture API route failed\n/);
  assert.match(failures[1], /^monitoring could not report it: TypeError: the SDK choked\n/);
});

Deno.test("a handler failing 30 times: 30 error events, 10 log entries and one count", async () => {
  const written: string[] = [];
  const failureLog = new FailureLog({ write: (entry) => written.push(entry) });
  const { fetch, errors } = await fixtureApp({ failureLog });
  for (let i = 0; i < 30; i++) {
    const res = await fetch("/api/boom");
    assert.equal(res.status, 500);
    await res.body?.cancel();
  }
  // Monitoring gets every one (its own limit is monitoring's); the log holds back the rest.
  assert.equal(errors.length, 30);
  assert.equal(written.length, 10);
  assert.ok(written.every((entry) => entry.includes("Error: fixture API route failed\n")));
  failureLog.flush();
  assert.match(written[10], /^request failed: 20 more failures not logged in full/);
});

Deno.test("an unknown API path is a JSON 404, on any method, never traced", async () => {
  const { fetch, traced } = await fixtureApp();
  const paths = ["/api/", "/api/nope", "/api/hello/", ...PROTOTYPE_NAMES.map((n) => `/api/${n}`)];
  for (const path of paths) {
    for (const method of ["GET", "HEAD", "POST", "DELETE"]) {
      const res = await fetch(path, { method });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal(res.headers.get("content-type"), "application/json");
      if (method !== "HEAD") assert.deepEqual(await res.json(), { error: "not found" });
      else await res.body?.cancel();
    }
  }
  assert.deepEqual(traced, []);
});

Deno.test("a wrong method on an API path is a JSON 405 with Allow", async () => {
  const { fetch } = await fixtureApp();
  for (const method of ["POST", "PUT", "constructor", "__proto__"]) {
    const res = await fetch("/api/hello", { method });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
    assert.equal(res.headers.get("content-type"), "application/json");
    await res.body?.cancel();
  }
});

Deno.test("apiRouteEntries: a path outside /api/ or with a query throws; GET brings HEAD", () => {
  const GET = () => new Response();
  const options = { trustProxy: false, maxBodyBytes: 10, bodies: defaultBodies() };
  for (const path of ["/hello", "api/hello", "/api/a?b", "/apix"]) {
    assert.throws(() => apiRouteEntries({ [path]: { GET } }, options), /must start with \/api\//);
  }
  assert.throws(() => apiRouteEntries({ "/api/x": {} }, options), /no method/);
  const listed = apiRouteEntries({ "/api/x": { GET }, "/api/y": { POST: GET } }, options);
  assert.deepEqual(listed.map(([p, m]) => [p, Object.keys(m)]), [
    ["/api/x", ["GET", "HEAD"]],
    ["/api/y", ["POST"]],
  ]);
});

// Over a real socket, as a client sends them: ctx.json()'s answers to a client's mistakes.
Deno.test("ctx.json(): 400 malformed, 400 empty, 415 wrong type, 413 too large, 200 valid; none reported", async () => {
  const { app, errors, failures } = await fixtureApp();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app);
  const url = `http://127.0.0.1:${server.addr.port}/api/echo`;
  const json = { "content-type": "application/json" };
  const cases: [RequestInit, number, string][] = [
    [{ headers: json, body: '{"a":' }, 400, "malformed JSON body"],
    [{ headers: json, body: "" }, 400, "empty body, expected JSON"],
    [{ body: '{"a":1}' }, 415, "expected a JSON body (content-type: application/json)"],
    [{ headers: { "content-type": "text/plain" }, body: '{"a":1}' }, 415, ""],
    [{ headers: json, body: "x".repeat(2 * 1024 * 1024) }, 413, "body larger than 1048576 bytes"],
    [
      { headers: { "content-type": "application/vnd.api+json; charset=utf-8" }, body: "\uFEFF[1]" },
      200,
      "",
    ],
  ];
  for (const [init, status, message] of cases) {
    const res = await fetch(url, { method: "POST", ...init });
    const body = await res.json();
    assert.equal(res.status, status, JSON.stringify(body));
    assert.equal(res.headers.get("content-type"), "application/json");
    if (message) assert.deepEqual(body, { error: message });
  }
  const echoed = await fetch(url, { method: "POST", headers: json, body: '{"a":[1]}' });
  assert.deepEqual(await echoed.json(), { a: [1] });
  assert.match(echoed.headers.get("x-id") ?? "", /^[0-9a-f-]{36}$/, "ctx.requestId");
  assert.equal(echoed.headers.get("x-id"), echoed.headers.get("x-request-id"));
  assert.deepEqual(errors, [], "no client mistake is reported");
  assert.deepEqual(failures, []);
});

Deno.test("ctx.json(): 20 bodies of 64 MiB are refused without being read; memory stays flat", async () => {
  const { app, errors } = await fixtureApp();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app);
  const url = `http://127.0.0.1:${server.addr.port}/api/echo`;
  const MiB = 1024 * 1024;
  // Streamed without a Content-Length, so the limit is found while reading, not announced; the
  // stream counts what the server let it send before it stopped reading.
  const chunk = new Uint8Array(64 * 1024);
  const post = async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= 64 * MiB) return controller.close();
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    }).catch(() => null);
    await res?.body?.cancel();
    return { status: res?.status, pulled };
  };
  await post();
  const before = Deno.memoryUsage().rss;
  const sent = [];
  for (let i = 0; i < 20; i++) sent.push(await post());
  const grown = Deno.memoryUsage().rss - before;
  // Read whole, each would be 64 MiB: 1.25 GiB in all. Past the 1 MiB limit the server reads
  // no more, so a client gets out only what the sockets' buffers take.
  for (const { status, pulled } of sent) {
    assert.ok(status === 413 || status === undefined, String(status));
    assert.ok(pulled < 16 * MiB, `${(pulled / MiB).toFixed(1)} MiB pulled`);
  }
  assert.ok(sent.some(({ status }) => status === 413));
  assert.ok(grown < 64 * MiB, `RSS grew ${Math.round(grown / MiB)} MiB`);
  assert.deepEqual(errors, []);
});

Deno.test("ctx.json(): a client that breaks off its upload is a 400, never a 500 or an event", async () => {
  const { app, errors, failures, logLines } = await fixtureApp();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  await conn.write(new TextEncoder().encode(
    "POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
      'Content-Length: 100000\r\n\r\n{"a":',
  ));
  conn.close();
  // A refusal: counted per client and reason (refusal_log.ts), the first in a line of its own.
  const line = () => logLines.map((l) => JSON.parse(l)).find((r) => r.reason === "POST /api/echo");
  for (let i = 0; i < 200 && line() === undefined; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(line()?.status, 400, JSON.stringify(logLines));
  assert.deepEqual(errors, []);
  assert.deepEqual(failures, []);
});

Deno.test("HEAD on an API route with GET: its headers, no body; ctx.clientAddress", async () => {
  const { app } = await fixtureApp();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app);
  const base = `http://127.0.0.1:${server.addr.port}`;
  const head = await fetch(`${base}/api/hello`, { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-type"), "application/json");
  assert.equal(await head.text(), "");
  const who = await fetch(`${base}/api/whoami`, { headers: { "x-forwarded-for": "203.0.113.9" } });
  assert.deepEqual(
    await who.json(),
    { address: "127.0.0.1" },
    "X-Forwarded-For ignored by default",
  );
  const behindProxy = await fixtureApp({ config: loadConfig({ TRUST_PROXY: "true" }) });
  const proxied = await behindProxy.fetch("/api/whoami", {
    headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.9" },
  });
  assert.deepEqual(await proxied.json(), { address: "203.0.113.9" }, "the proxy's entry");
});
