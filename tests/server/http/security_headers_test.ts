import assert from "node:assert/strict";
import {
  addSecurityHeaders,
  hstsDue,
  type HstsMode,
  isHttps,
  onDenoDeploy,
} from "../../../server/http/security_headers.ts";

const applySecurityHeaders = (res: Response, options: { https: boolean; hsts: HstsMode }) =>
  addSecurityHeaders(res, hstsDue(options));

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
