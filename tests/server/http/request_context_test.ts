import assert from "node:assert/strict";
import { RequestContext, requestIdFor } from "../../../server/http/request_context.ts";
import { SECURITY_HEADERS } from "../../../server/http/security_headers.ts";

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
