import assert from "node:assert/strict";
import {
  hstsDue,
  type HstsMode,
  isHttps,
  onDenoDeploy,
  RequestContext,
  requestIdFor,
  SECURITY_HEADERS,
} from "../../../server/http/request_context.ts";

const body = new TextEncoder().encode("hello");

Deno.test("RequestContext.send: the handler's headers, the security headers and the request id at once", async () => {
  const ctx = new RequestContext("req-1", false, "/");
  const res = ctx.send(body, 201, { "content-type": "text/plain" });
  assert.equal(res.status, 201);
  assert.equal(res.headers.get("content-type"), "text/plain");
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    assert.equal(res.headers.get(name), value);
  }
  assert.equal(res.headers.get("x-request-id"), "req-1");
  assert.equal(res.headers.get("strict-transport-security"), null);
  assert.equal(ctx.bytes, 5);
  assert.equal(await res.text(), "hello");
});

Deno.test("RequestContext.send: HSTS when due, and the size given for a body without one", () => {
  const ctx = new RequestContext("req-2", true, "/");
  const res = ctx.send(null, 200, {}, 42);
  assert.equal(res.headers.get("strict-transport-security"), "max-age=31536000");
  assert.equal(ctx.bytes, 42);
});

Deno.test("RequestContext.complete: leaves an answer it built as it is", () => {
  const ctx = new RequestContext("req-3", false, "/");
  const res = ctx.send(body, 200, { "content-type": "text/plain" });
  assert.equal(ctx.complete(res), res);
  assert.equal(ctx.bytes, 5);
});

Deno.test("RequestContext.complete: adds the common headers to any other answer", async () => {
  const ctx = new RequestContext("req-4", true, "/");
  const res = ctx.complete(
    new Response("{}", { headers: { "content-type": "application/json", "content-length": "2" } }),
  );
  assert.equal(res.headers.get("x-request-id"), "req-4");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(res.headers.get("strict-transport-security"), "max-age=31536000");
  assert.equal(ctx.bytes, 2);
  // Immutable headers (a redirect) are copied, not thrown on.
  const redirect = new RequestContext("req-5", false, "/").complete(
    Response.redirect("http://x/", 302),
  );
  assert.equal(redirect.headers.get("x-request-id"), "req-5");
  assert.equal(redirect.headers.get("location"), "http://x/");
  await res.body?.cancel();
});

Deno.test("requestIdFor: keeps a sane incoming id, replaces anything else", () => {
  const withId = (id: string) =>
    requestIdFor(new Request("http://x/", { headers: { "x-request-id": id } }));
  assert.equal(withId("abc-123"), "abc-123");
  assert.match(withId("bad id\twith spaces"), /^[0-9a-f-]{36}$/);
  assert.match(withId("x".repeat(200)), /^[0-9a-f-]{36}$/);
  assert.match(requestIdFor(new Request("http://x/")), /^[0-9a-f-]{36}$/);
});

// Any answer the context did not build (API routes, the tunnel) gets the common headers added.
const completed = (res: Response, options: { https: boolean; hsts: HstsMode }) =>
  new RequestContext("r", hstsDue(options), "/").complete(res);

Deno.test("complete: the fixed headers on any response", () => {
  const res = completed(new Response("x"), { https: false, hsts: "auto" });
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(res.headers.get("referrer-policy"), "strict-origin-when-cross-origin");
  assert.equal(res.headers.get("cross-origin-opener-policy"), "same-origin");
  assert.match(res.headers.get("permissions-policy") ?? "", /camera=\(\)/);
  assert.equal(res.headers.get("strict-transport-security"), null);
});

Deno.test("HSTS over HTTPS in auto mode, always with on, never with off", () => {
  const hsts = (https: boolean, mode: HstsMode) =>
    completed(new Response(null), { https, hsts: mode }).headers.get("strict-transport-security");
  assert.equal(hsts(true, "auto"), "max-age=31536000");
  assert.equal(hsts(false, "on"), "max-age=31536000");
  assert.equal(hsts(true, "off"), null);
});

Deno.test("complete: works on responses with immutable headers", async () => {
  const res = completed(Response.redirect("http://x/", 302), { https: false, hsts: "auto" });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get("location"), "http://x/");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  await res.body?.cancel();
});

Deno.test("isHttps: the listener, or X-Forwarded-Proto only from a trusted proxy", () => {
  const plain = { httpsListener: false, trustProxy: false };
  const forwarded = new Request("http://x/", { headers: { "x-forwarded-proto": "https" } });
  assert.ok(isHttps(new Request("http://x/"), { httpsListener: true, trustProxy: false }));
  assert.ok(!isHttps(forwarded, plain));
  assert.ok(isHttps(forwarded, { httpsListener: false, trustProxy: true }));
  assert.ok(!isHttps(new Request("http://x/"), { httpsListener: false, trustProxy: true }));
  const chain = new Request("http://x/", { headers: { "x-forwarded-proto": "HTTPS , http" } });
  assert.ok(isHttps(chain, { httpsListener: false, trustProxy: true }));
  const spoofed = new Request("http://x/", { headers: { "x-forwarded-proto": "http, https" } });
  assert.ok(!isHttps(spoofed, { httpsListener: false, trustProxy: true }));
});

Deno.test("isHttps: an https URL alone (an absolute-form target over plain HTTP) is not HTTPS", () => {
  assert.ok(!isHttps(new Request("https://x/"), { httpsListener: false, trustProxy: false }));
  assert.ok(!isHttps(new Request("https://x/"), { httpsListener: false, trustProxy: true }));
});

Deno.test("onDenoDeploy: false where DENO_DEPLOYMENT_ID is not set or not readable", () => {
  const readable = Deno.permissions.querySync({ name: "env", variable: "DENO_DEPLOYMENT_ID" });
  const set = readable.state === "granted" && !!Deno.env.get("DENO_DEPLOYMENT_ID");
  assert.equal(onDenoDeploy(), set);
});
