/**
 * What the tunnel refuses before forwarding anything: a DSN that is not allowed, a malformed
 * envelope header, no DSN configured (503). Other methods never reach it: the router answers
 * 405 with `Allow: POST` (tests/main_http_test.ts).
 */
import assert from "node:assert/strict";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import {
  assertOneLineReason,
  buildEnvelope,
  post,
  randomBytes,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

test("an envelope for a DSN that is not allowed is refused and goes nowhere", async () => {
  await using ingest = startFakeIngest();
  await using other = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn("public", "1", "/sentry")]);
  const allowed = ingest.dsn("public", "1", "/sentry");
  const refused = [
    other.dsn("public", "1", "/sentry"), // another server (port)
    ingest.dsn("public", "2", "/sentry"), // another project
    ingest.dsn("secret", "1", "/sentry"), // another key
    ingest.dsn("public", "1"), // no path prefix
    ingest.dsn("public", "1", "/other"), // another path prefix
    allowed.replace("http:", "https:"), // another protocol
    allowed.replace("127.0.0.1", "localhost"), // another host name, same machine
    allowed.replace("//public@", "//public:secret@"), // a legacy secret key
  ];
  for (const dsn of refused) {
    const answer = await post(tunnel.url, buildEnvelope(dsn, randomBytes(100)));
    assertOneLineReason(answer, 403, /not allowed/);
  }
  assert.equal(other.started, 0);
  assert.equal(ingest.started, 0);
  assert.equal(tunnel.logs.length, refused.length);
  assert.deepEqual(tunnel.logs[0], {
    reason: "envelope DSN is not allowed here",
    status: 403,
    bytes: buildEnvelope(refused[0], randomBytes(100)).byteLength,
  });
  // The allowed one still works, and lands under its path prefix.
  assert.equal((await post(tunnel.url, buildEnvelope(allowed, randomBytes(10)))).status, 200);
  await tunnel.delivery.flush(10_000);
  assert.equal(ingest.requests[0].path, "/sentry/api/1/envelope/");
});

test("malformed envelope headers are refused with a one-line reason", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([ingest.dsn()]);
  const cases: [string, BodyInit | null, RegExp][] = [
    ["empty", null, /too long or missing/],
    ["no newline", `{"dsn":"${ingest.dsn()}"}`, /too long or missing/],
    ["long line", `{"dsn":"${ingest.dsn()}","p":"${"x".repeat(70_000)}"}\n`, /too long/],
    ["not JSON", "hello\n{}", /not JSON/],
    ["not object", "[1]\n", /not a JSON object/],
    ["no dsn", "{}\n", /no dsn/],
    ["dsn number", `{"dsn":5}\n`, /not a string/],
    ["dsn invalid", `{"dsn":"http://127.0.0.1/1"}\n`, /not a valid DSN/],
    ["bad UTF-8", new Uint8Array([0x7b, 0xc3, 0x28, 0x7d, 0x0a]), /UTF-8/],
  ];
  for (const [name, body, reason] of cases) {
    assertOneLineReason(await post(tunnel.url, body), 400, reason);
    assert.equal(tunnel.logs.at(-1)?.status, 400, name);
  }
  assert.equal(tunnel.logs.length, cases.length);
  assert.equal(ingest.started, 0);
});

test("answers 503 when no DSN is configured", async () => {
  await using ingest = startFakeIngest();
  await using tunnel = startTunnel([]);
  const answer = await post(tunnel.url, buildEnvelope(ingest.dsn(), randomBytes(10)));
  assertOneLineReason(answer, 503, /no Sentry DSN configured/);
  assert.equal(ingest.started, 0);
  assert.equal(tunnel.logs.length, 1);
});
