import assert from "node:assert/strict";
import {
  contentEncoding,
  MAX_USER_AGENT_CHARS,
  precheck,
  rateLimited,
  upstreamHeaders,
} from "../../../server/tunnel/policy.ts";

Deno.test("contentEncoding: known encodings only, whatever the client's string", () => {
  assert.equal(contentEncoding(null), null);
  assert.equal(contentEncoding(" Identity "), null);
  assert.equal(contentEncoding("X-GZIP"), "gzip");
  assert.equal(contentEncoding("br"), "br");
  for (const hostile of ["__proto__", "constructor", "toString", "gzip, br", "zstd"]) {
    assert.equal(contentEncoding(hostile), "unsupported", hostile);
  }
});

Deno.test("precheck: 503, 415, 413 in that order, else nothing", () => {
  const limits = { enabled: true, maxBodyBytes: 100 };
  assert.equal(precheck({ ...limits, enabled: false }, null, null)?.status, 503);
  assert.equal(precheck(limits, 1, "unsupported")?.status, 415);
  assert.equal(precheck(limits, 101, "gzip")?.status, 413);
  assert.equal(precheck(limits, 100, "br"), undefined);
});

Deno.test("rateLimited: the SDK's header format, all categories", () => {
  const rejection = rateLimited(17);
  assert.equal(rejection.status, 429);
  assert.deepEqual(rejection.headers, {
    "retry-after": "17",
    "x-sentry-rate-limits": "17::organization",
  });
});

Deno.test("upstreamHeaders: a client's huge User-Agent is cut before it reaches the queue", () => {
  const agent = "Mozilla/5.0 " + "x".repeat(256 * 1024);
  const headers = upstreamHeaders(new Headers({ "user-agent": agent }), "10.0.0.1");
  assert.equal(headers["user-agent"], agent.slice(0, MAX_USER_AGENT_CHARS));
  assert.equal(MAX_USER_AGENT_CHARS, 512);
  const browser = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/131.0 Safari/537.36";
  assert.equal(upstreamHeaders(new Headers({ "user-agent": browser }), "")["user-agent"], browser);
});
