import assert from "node:assert/strict";
import {
  clientAddress,
  decoderFormat,
  precheck,
  rateLimited,
  relayFor,
  stoppedRejection,
} from "../../../server/tunnel/policy.ts";

Deno.test("decoderFormat: known encodings only, whatever the client's string", () => {
  assert.equal(decoderFormat(null), null);
  assert.equal(decoderFormat(" Identity "), null);
  assert.equal(decoderFormat("X-GZIP"), "gzip");
  assert.equal(decoderFormat("br"), "br");
  for (const hostile of ["__proto__", "constructor", "toString", "gzip, br", "zstd"]) {
    assert.equal(decoderFormat(hostile), "unsupported", hostile);
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

Deno.test("stoppedRejection: a stalled body is 408, a slow ingest 504", () => {
  const limits = { maxBodyBytes: 10, timeoutMs: 5 };
  assert.equal(stoppedRejection("timeout", false, limits).status, 408);
  assert.equal(stoppedRejection("timeout", true, limits).status, 504);
  assert.equal(stoppedRejection("too-large", false, limits).status, 413);
  assert.equal(stoppedRejection("client", false, limits).status, 400);
});

Deno.test("relayFor: JSON bodies pass; HTML and anything else become a text reason", () => {
  const html = relayFor(
    503,
    new Headers({
      "content-type": "text/html",
      "retry-after": "5",
      "set-cookie": "a=b",
      "x-sentry-rate-limits": "5::organization",
    }),
  );
  assert.equal(html.passBody, false);
  assert.equal(html.text, "ingest answered 503\n");
  assert.deepEqual(html.headers, {
    "content-type": "text/plain; charset=utf-8",
    "retry-after": "5",
    "x-sentry-rate-limits": "5::organization",
  });
  const json = relayFor(200, new Headers({ "content-type": "application/json; charset=utf-8" }));
  assert.equal(json.passBody, true);
  assert.equal(json.headers["content-type"], "application/json");
  assert.equal(relayFor(200, new Headers({ "content-type": "application/jsonp" })).passBody, false);
  assert.equal(relayFor(200, new Headers()).passBody, false);
});

Deno.test("clientAddress: the socket, or the entry the trusted proxy added to X-Forwarded-For", () => {
  const socket = { transport: "tcp", hostname: "10.0.0.1", port: 1 } as const;
  // The client sent the first entry; the proxy appended the address it saw.
  const headers = new Headers({ "x-forwarded-for": "198.51.100.9, 203.0.113.7" });
  assert.equal(clientAddress(headers, socket, false), "10.0.0.1");
  assert.equal(clientAddress(headers, socket, true), "203.0.113.7");
  const single = new Headers({ "x-forwarded-for": " 2001:db8::1 " });
  assert.equal(clientAddress(single, socket, true), "2001:db8::1");
  for (const forged of ["<script>", "203.0.113.7, <script>", "203.0.113.7,", ""]) {
    const headers = new Headers({ "x-forwarded-for": forged });
    assert.equal(clientAddress(headers, socket, true), "10.0.0.1", forged);
  }
});
