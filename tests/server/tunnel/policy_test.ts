import assert from "node:assert/strict";
import {
  contentEncoding,
  precheck,
  rateLimited,
  relayedHeaders,
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

Deno.test("relayedHeaders: only the rate-limit headers; JSON bodies pass, anything else does not", () => {
  const html = relayedHeaders(
    new Headers({
      "content-type": "text/html",
      "retry-after": "5",
      "set-cookie": "a=b",
      "x-sentry-rate-limits": "5::organization",
    }),
  );
  assert.deepEqual(html, {
    json: false,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "retry-after": "5",
      "x-sentry-rate-limits": "5::organization",
    },
  });
  const json = relayedHeaders(new Headers({ "content-type": "application/json; charset=utf-8" }));
  assert.equal(json.json, true);
  assert.equal(json.headers["content-type"], "application/json");
  assert.equal(relayedHeaders(new Headers({ "content-type": "application/jsonp" })).json, false);
  assert.equal(relayedHeaders(new Headers()).json, false);
});
