import assert from "node:assert/strict";
import { applySecurityHeaders, isHttps } from "../server/security_headers.ts";

Deno.test("applySecurityHeaders: the fixed headers on any response", () => {
  const res = applySecurityHeaders(new Response("x"), { https: false, hsts: "auto" });
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  assert.equal(res.headers.get("referrer-policy"), "strict-origin-when-cross-origin");
  assert.equal(res.headers.get("cross-origin-opener-policy"), "same-origin");
  assert.match(res.headers.get("permissions-policy") ?? "", /camera=\(\)/);
  assert.equal(res.headers.get("strict-transport-security"), null);
});

Deno.test("applySecurityHeaders: HSTS over HTTPS in auto mode, always with on, never with off", () => {
  const hsts = (https: boolean, mode: "auto" | "on" | "off") =>
    applySecurityHeaders(new Response(null), { https, hsts: mode }).headers.get(
      "strict-transport-security",
    );
  assert.equal(hsts(true, "auto"), "max-age=31536000");
  assert.equal(hsts(false, "on"), "max-age=31536000");
  assert.equal(hsts(true, "off"), null);
});

Deno.test("applySecurityHeaders: works on responses with immutable headers", async () => {
  const res = applySecurityHeaders(Response.redirect("http://x/", 302), {
    https: false,
    hsts: "auto",
  });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get("location"), "http://x/");
  assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  await res.body?.cancel();
});

Deno.test("isHttps: the URL, or X-Forwarded-Proto only from a trusted proxy", () => {
  const forwarded = new Request("http://x/", { headers: { "x-forwarded-proto": "https" } });
  assert.ok(isHttps(new Request("https://x/"), false));
  assert.ok(!isHttps(forwarded, false));
  assert.ok(isHttps(forwarded, true));
  assert.ok(!isHttps(new Request("http://x/"), true));
});
