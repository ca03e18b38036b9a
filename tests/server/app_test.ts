/**
 * The request edge over a real socket: the real server (as `deno task start` runs it) on
 * 127.0.0.1 port 0, sent hostile request lines that `fetch` cannot produce.
 */
import assert from "node:assert/strict";
import { readManifest } from "../../server/build/manifest.ts";
import { startFakeIngest } from "../support/fake_ingest.ts";
import { type RawRequest, rawRequest, type RawResponse } from "../support/raw_http.ts";
import { startServer } from "../support/server.ts";

const manifest = await readManifest();
// Monitoring on, pointed at a fake ingest: the last test checks that nothing here was reported.
const ingest = startFakeIngest();
const server = await startServer({
  SENTRY_DSN: ingest.dsn("edge", "1"),
  SENTRY_TRACES_SAMPLE_RATE: "0",
  DEBUG_ERROR_ROUTE: "true",
});

Deno.test.afterAll(async () => {
  await server.stop();
  await ingest.close();
});

const send = (request: RawRequest) => rawRequest(server.url, request);
const HOST = ["Host", "app.example"] as const;
const COOKIE = "session=edge-secret-cookie";
const BODY = "edge-secret-body";

// Every name a plain object inherits, plus the two that reach its prototype another way.
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"];
const ROUTES = ["/", "/healthz", "/monitoring", "/debug/error", manifest.script, "/nothing-here"];

function assertRefusedNotFailed(res: RawResponse, what: string) {
  assert.ok(res.status >= 400 && res.status < 500, `${what}: ${res.status}\n${res.raw}`);
  assert.ok(!res.raw.includes("edge-secret"), `${what} echoed the request:\n${res.raw}`);
}

// First: the hostile requests below make more kinds of refusal than an interval tells apart.
Deno.test("the request log records the path that was served, without the query", async () => {
  const id = `edge-log-${crypto.randomUUID()}`;
  const absolute = await send({
    method: "GET",
    target: "http://app.example/healthz?token=edge-query-secret",
    headers: [HOST, ["X-Request-Id", `${id}-a`]],
  });
  assert.equal(absolute.status, 200);
  const steered = await send({
    method: "GET",
    // A path of its own: a refusal is a line of its own the first time in an interval.
    target: `/nothing-here-${id}?token=edge-query-secret`,
    headers: [["Host", "x/healthz#"], ["X-Request-Id", `${id}-b`]],
  });
  assert.equal(steered.status, 400);
  const a = await logRecord(`${id}-a`);
  assert.equal(a.path, "/healthz");
  assert.equal(a.status, 200);
  const b = await logRecord(`${id}-b`);
  // Refused: counted, with the path asked for, not the one the Host pointed at.
  assert.equal(b.reason, `GET /nothing-here-${id}`);
  assert.equal(b.status, 400);
  assert.ok(!server.output().includes("edge-query-secret"));
});

Deno.test("Object.prototype names as methods: 4xx on every route, never an echo or a 5xx", async () => {
  for (const method of PROTOTYPE_NAMES) {
    for (const target of ROUTES) {
      const res = await send({ method, target, headers: [HOST, ["Cookie", COOKIE]], body: BODY });
      assertRefusedNotFailed(res, `${method} ${target}`);
    }
  }
  const res = await send({ method: "constructor", target: "/", headers: [HOST] });
  assert.equal(res.status, 405);
  assert.equal(res.headers.get("allow"), "GET, HEAD");
});

Deno.test("Object.prototype names as paths and path segments: 404 or 405, never 2xx or 5xx", async () => {
  for (const name of PROTOTYPE_NAMES) {
    const targets = [`/${name}`, `/monitoring/${name}`, `/healthz/${name}`, `/build/${name}`];
    for (const target of targets) {
      for (const method of ["GET", "HEAD", "POST", name]) {
        const res = await send({ method, target, headers: [HOST, ["Cookie", COOKIE]] });
        assertRefusedNotFailed(res, `${method} ${target}`);
      }
    }
  }
});

Deno.test("a malformed Host header is a 400 with a one-line reason, on every route", async () => {
  const hosts = ["[::1", "a b", "127.0.0.1:99999", "a%2fb", "u:p@x", "x:80:80", "b\u00fccher.de"];
  // Shaped like a host, but refused by the URL parser that monitoring and loaders use.
  hosts.push("256.0.0.1", "1.2.3.4.5", "xn--a", "[1:2:3]");
  for (const host of hosts) {
    for (const [method, target] of [...ROUTES.map((r) => ["GET", r]), ["POST", "/monitoring"]]) {
      const res = await send({ method, target, headers: [["Host", host]] });
      assert.equal(res.status, 400, `${method} ${target} Host ${host}\n${res.raw}`);
      assert.equal(res.body, "malformed Host header\n");
      assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    }
  }
});

Deno.test("a Host cannot steer routing to /healthz or the tunnel", async () => {
  for (
    const host of ["x/healthz#", "x/healthz?", "x\\healthz#", "x/monitoring#", "x/monitoring?"]
  ) {
    for (const method of ["GET", "POST"]) {
      const res = await send({ method, target: "/nothing-here", headers: [["Host", host]] });
      assert.equal(res.status, 400, `${method} Host ${host}\n${res.raw}`);
      assert.equal(res.body, "malformed Host header\n");
    }
  }
});

Deno.test("an absolute-form target routes by its own path and never turns on HSTS", async () => {
  const health = await send({
    method: "GET",
    target: "https://evil.example/healthz",
    headers: [HOST],
  });
  assert.equal(health.status, 200);
  assert.match(health.body, /"status":"ok"/);
  assert.equal(health.headers.get("strict-transport-security"), undefined);
  const page = await send({ method: "GET", target: "https://evil.example/", headers: [HOST] });
  assert.equal(page.status, 200);
  assert.equal(page.headers.get("strict-transport-security"), undefined);
  const missing = await send({ method: "GET", target: "https://x/nothing-here", headers: [HOST] });
  assert.equal(missing.status, 404);
});

Deno.test("a target that is not http(s) with a plain authority is a 400", async () => {
  for (const target of ["ftp://evil.example/healthz", "http://u@x/healthz"]) {
    const res = await send({ method: "GET", target, headers: [HOST] });
    assert.equal(res.status, 400, `${target}\n${res.raw}`);
    assert.match(res.body, /^[a-z ]+\n$/);
  }
});

Deno.test("dot segments and backslashes are not resolved into a route", async () => {
  for (const target of ["/a/../healthz", "/%2e%2e/healthz", "/a\\..\\healthz", "/./healthz"]) {
    const res = await send({ method: "GET", target, headers: [HOST] });
    assert.equal(res.status, 404, `${target}\n${res.raw}`);
  }
});

// It stops the file's shared server (to flush monitoring), a resource this test did not open.
Deno.test({
  name: "nothing above reached Sentry; a real server error still does",
  sanitizeResources: false,
}, async () => {
  // A sample of the hostile requests, so this test proves something when run on its own.
  await send({ method: "toString", target: "/", headers: [HOST] });
  await send({ method: "valueOf", target: "/healthz", headers: [HOST] });
  await send({ method: "GET", target: "/", headers: [["Host", "[::1"]] });
  const error = await send({ method: "GET", target: "/debug/error", headers: [HOST] });
  assert.equal(error.status, 500);
  assert.ok(!error.body.includes("Debug error"), "no detail reaches the client");
  await server.stop(); // flushes monitoring before it exits
  const events = (await ingest.envelopes()).flatMap(([, items]) =>
    items.filter(([item]) => item.type === "event").map(([, payload]) => JSON.stringify(payload))
  );
  assert.equal(events.length, 1, events.join("\n"));
  assert.match(events[0], /Debug error from GET \/debug\/error/);
  assert.doesNotMatch(server.output(), /request failed outside the app's handler/);
});

// Log lines are written in batches; wait (bounded) for the one with this request id.
async function logRecord(requestId: string): Promise<Record<string, unknown>> {
  for (let waited = 0; waited < 5_000; waited += 20) {
    for (const line of server.output().split("\n")) {
      if (line.includes(`"requestId":"${requestId}"`)) return JSON.parse(line);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no log line for ${requestId}:\n${server.output()}`);
}
