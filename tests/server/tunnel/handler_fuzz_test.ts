/**
 * Property tests of the tunnel on loopback: malformed headers and bodies, and DSNs near the
 * allowed one, are always a 4xx and never forwarded.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { parseDsn, sameDsn } from "../../../server/dsn.ts";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import {
  assertOneLineReason,
  buildEnvelope,
  chunkedStream,
  concat,
  encoder,
  mustParse,
  post,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

test("fuzz: malformed headers and bodies are always a 4xx and never forwarded", async () => {
  await using ingest = startFakeIngest();
  const allowedDsn = ingest.dsn("public", "1");
  const allowed = mustParse(allowedDsn);
  await using tunnel = startTunnel([allowedDsn], { maxBodyBytes: 96 * 1024 });

  const nearMissDsn = fc.record({
    protocol: fc.constantFrom("http", "https", "ftp", "HTTP"),
    key: fc.constantFrom("public", "Public", "other", "", "pub lic"),
    host: fc.constantFrom("127.0.0.1", "localhost", "127.0.0.2", "[::1]", ""),
    port: fc.constantFrom(String(ingest.port), String(ingest.port + 1), "", "0", "99999"),
    prefix: fc.constantFrom("", "/x", "//", "/api"),
    project: fc.constantFrom("1", "2", "01", "", "1/", "a"),
  }).map(({ protocol, key, host, port, prefix, project }) =>
    `${protocol}://${key}@${host}${port ? `:${port}` : ""}${prefix}/${project}`
  ).filter((dsn) => {
    const parsed = parseDsn(dsn);
    return parsed === null || !sameDsn(parsed, allowed);
  });
  const dsnValue = fc.oneof(
    nearMissDsn,
    fc.string(),
    fc.webUrl(),
    fc.jsonValue().filter((v) => typeof v !== "string"),
  );
  const headerLine = fc.oneof(
    dsnValue.map((dsn) => JSON.stringify({ event_id: "x", dsn })),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    fc.string(),
    fc.string({ unit: "binary" }),
  ).map((line) => encoder.encode(line));
  const body = fc.oneof(
    fc.tuple(headerLine, fc.uint8Array({ maxLength: 4096 })).map(([line, rest]) =>
      concat([line, new Uint8Array([0x0a]), rest])
    ),
    fc.uint8Array({ maxLength: 4096 }),
    fc.uint8Array({ minLength: 100 * 1024, maxLength: 100 * 1024 }), // over the cap
  );
  const encoding = fc.constantFrom(undefined, "identity", "gzip", "deflate", "br", "nope");

  await fc.assert(
    fc.asyncProperty(body, encoding, fc.boolean(), async (bytes, contentEncoding, chunked) => {
      const headers: Record<string, string> = contentEncoding === undefined
        ? {}
        : { "content-encoding": contentEncoding };
      const answer = await post(tunnel.url, chunked ? chunkedStream(bytes, 512) : bytes, headers);
      assert.ok(answer.status >= 400 && answer.status < 500, `${answer.status} ${answer.text}`);
      assertOneLineReason(answer, answer.status);
    }),
    { numRuns: 300 },
  );
  assert.equal(ingest.started, 0, "nothing may be forwarded");
});

test("fuzz: a DSN one or more fields off the allowed one is refused, never forwarded", async () => {
  await using ingest = startFakeIngest();
  await using other = startFakeIngest();
  const allowedDsn = ingest.dsn("public", "1", "/sentry");
  await using tunnel = startTunnel([allowedDsn]);
  const allowedParts = {
    protocol: "http",
    key: "public",
    host: "127.0.0.1",
    port: `:${ingest.port}`,
    prefix: "/sentry",
    project: "1",
  };
  // Most alternatives are valid DSNs aimed at a live loopback server, so a tunnel that let
  // one through would show it at once.
  const offFields = fc.record({
    protocol: fc.constantFrom("https", "ftp", "ws"),
    key: fc.constantFrom("Public", "other", "publi", "public2"),
    // Not "127.0.0.1.": URL parsing drops an IPv4 trailing dot, so it is the same host.
    host: fc.constantFrom("localhost", "127.0.0.2", "[::1]", "127.0.0.10"),
    port: fc.constantFrom(`:${other.port}`, "", ":80"),
    prefix: fc.constantFrom("", "/other", "/sentry/x", "/Sentry"),
    project: fc.constantFrom("2", "11", "10"),
  }, { requiredKeys: [] }).filter((fields) => Object.keys(fields).length > 0);
  const dsn = offFields.map((fields) => {
    const p = { ...allowedParts, ...fields };
    return `${p.protocol}://${p.key}@${p.host}${p.port}${p.prefix}/${p.project}`;
  });
  await fc.assert(
    fc.asyncProperty(dsn, fc.uint8Array({ maxLength: 2048 }), fc.boolean(), async (d, p, c) => {
      const envelope = buildEnvelope(d, p);
      const answer = await post(tunnel.url, c ? chunkedStream(envelope, 700) : envelope);
      assert.ok([400, 403].includes(answer.status), `${d}: ${answer.status} ${answer.text}`);
      assertOneLineReason(answer, answer.status);
    }),
    { numRuns: 200 },
  );
  assert.equal(ingest.started + other.started, 0, "nothing may be forwarded");
});
