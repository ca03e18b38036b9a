import assert from "node:assert/strict";
import { contentSecurityPolicy, createNonce, cspReports } from "../../../server/page/csp.ts";
import { loadConfig } from "../../../server/lifecycle/config.ts";

Deno.test("contentSecurityPolicy: nonce-only scripts and the required directives", () => {
  const policy = contentSecurityPolicy("abc123");
  const directives = new Map(
    policy.split("; ").map((d) => [d.split(" ")[0], d.slice(d.indexOf(" ") + 1)]),
  );
  assert.equal(directives.get("script-src"), "'nonce-abc123' 'strict-dynamic'");
  assert.equal(directives.get("object-src"), "'none'");
  assert.equal(directives.get("base-uri"), "'none'");
  assert.equal(directives.get("frame-ancestors"), "'none'");
  assert.equal(directives.get("form-action"), "'self'");
  assert.equal(directives.get("connect-src"), "'self'");
  // Replay's compression worker is a build file; nonces do not apply to workers.
  assert.equal(directives.get("worker-src"), "'self'");
  assert.ok(!policy.includes("unsafe-inline") && !policy.includes("unsafe-eval"));
  // No source but the page's own origin (and the nonce): no `blob:`, `data:` only for images.
  const sources = [...directives.values()].flatMap((value) => value.split(" "));
  assert.deepEqual(
    sources.filter((s) => !/^'(self|none|strict-dynamic|nonce-abc123)'$/.test(s)),
    ["data:"],
  );
  assert.ok(!directives.has("report-uri"));
});

Deno.test("contentSecurityPolicy: report-uri when given", () => {
  const policy = contentSecurityPolicy("n", "https://sentry.example/api/1/security/?sentry_key=k");
  assert.ok(policy.endsWith("; report-uri https://sentry.example/api/1/security/?sentry_key=k"));
});

Deno.test("createNonce: 128 random bits, base64, different every time", () => {
  const nonces = new Set(Array.from({ length: 1000 }, createNonce));
  assert.equal(nonces.size, 1000);
  for (const nonce of nonces) {
    assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/);
    assert.equal(atob(nonce).length, 16);
  }
});

Deno.test("cspReports: the app's path under TUNNEL_PATH and the own DSN's security endpoint", () => {
  const config = loadConfig({ SENTRY_DSN: "https://k@o1.ingest.sentry.io/2", TUNNEL_PATH: "/t" });
  assert.deepEqual(cspReports(config, "r1"), {
    path: "/t/csp",
    target: "https://o1.ingest.sentry.io/api/2/security/?sentry_key=k&sentry_environment=" +
      "production&sentry_release=r1",
  });
  assert.equal(cspReports(loadConfig({}), "r1"), undefined, "no DSN, no reports");
});
