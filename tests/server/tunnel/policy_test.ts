import assert from "node:assert/strict";
import { contentEncoding, precheck, rateLimited } from "../../../server/tunnel/policy.ts";

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
