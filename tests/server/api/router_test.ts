import assert from "node:assert/strict";
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
  const echo = await fetch("/api/echo", { method: "POST", body: '{"a":[1]}' });
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
  for (const method of ["POST", "PUT", "HEAD", "constructor", "__proto__"]) {
    const res = await fetch("/api/hello", { method });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("allow"), "GET");
    assert.equal(res.headers.get("content-type"), "application/json");
    await res.body?.cancel();
  }
});

Deno.test("apiRouteEntries: a path outside /api/ or with a query throws", () => {
  const GET = () => new Response();
  for (const path of ["/hello", "api/hello", "/api/a?b", "/apix"]) {
    assert.throws(() => apiRouteEntries({ [path]: { GET } }), /must start with \/api\//, path);
  }
  assert.throws(() => apiRouteEntries({ "/api/x": {} }), /no method/);
  assert.deepEqual(apiRouteEntries({ "/api/x": { GET } }).map(([p, m]) => [p, Object.keys(m)]), [
    ["/api/x", ["GET"]],
  ]);
});
