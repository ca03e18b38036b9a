import assert from "node:assert/strict";
import { findAllowedDsn, ingestUrl, parseDsn, sameDsn } from "../../server/dsn.ts";

function mustParse(input: string) {
  const dsn = parseDsn(input);
  if (dsn === null) throw new Error(`expected ${input} to parse`);
  return dsn;
}

Deno.test("parseDsn reads a sentry.io DSN", () => {
  assert.deepEqual(parseDsn("https://abc123@o42.ingest.sentry.io/4500"), {
    protocol: "https:",
    hostname: "o42.ingest.sentry.io",
    port: "443",
    path: "",
    publicKey: "abc123",
    secretKey: "",
    projectId: "4500",
  });
});

Deno.test("a DSN with a legacy secret key is not the same DSN as the one without", () => {
  const withSecret = mustParse("https://key:hunter2@o1.ingest.sentry.io/5");
  const plain = mustParse("https://key@o1.ingest.sentry.io/5");
  assert.equal(withSecret.secretKey, "hunter2");
  assert.equal(sameDsn(withSecret, plain), false);
  assert.equal(findAllowedDsn(withSecret, [plain]), undefined);
});

Deno.test("parseDsn keeps a self-hosted path prefix without its trailing slash", () => {
  const dsn = mustParse("https://key@sentry.example.com/tools/sentry/7");
  assert.equal(dsn.path, "/tools/sentry");
  assert.equal(dsn.projectId, "7");
});

Deno.test("parseDsn accepts http on a private address with an explicit port", () => {
  const dsn = mustParse("http://k_e-y@10.0.0.5:9000/3");
  assert.deepEqual([dsn.protocol, dsn.hostname, dsn.port, dsn.publicKey], [
    "http:",
    "10.0.0.5",
    "9000",
    "k_e-y",
  ]);
});

Deno.test("parseDsn normalises the default port and the host's case", () => {
  const explicit = mustParse("https://key@Sentry.Example.COM:443/1");
  assert.equal(explicit.port, "443");
  assert.equal(explicit.hostname, "sentry.example.com");
  assert.equal(mustParse("http://key@h:80/1").port, "80");
});

Deno.test("parseDsn accepts an IPv6 host, kept in brackets", () => {
  const dsn = mustParse("http://key@[::1]:8000/12");
  assert.equal(dsn.hostname, "[::1]");
  assert.equal(dsn.port, "8000");
});

Deno.test("parseDsn rejects what is not a usable DSN", () => {
  const invalid = [
    "",
    "not a url",
    "https://o42.ingest.sentry.io/1", // no public key
    "https://@o42.ingest.sentry.io/1",
    "https://key@o42.ingest.sentry.io/", // no project id
    "https://key@o42.ingest.sentry.io",
    "https://key@o42.ingest.sentry.io/abc",
    "https://key@o42.ingest.sentry.io/1/", // trailing slash after the project id
    "https://key@o42.ingest.sentry.io/1?x=1",
    "https://key@o42.ingest.sentry.io/1#x",
    "https://ke%20y@o42.ingest.sentry.io/1",
    "ftp://key@example.com/1",
    "ftp://key@example.com:2121/1", // an explicit port must not let another scheme in
    "ws://key@example.com:8080/1",
    "file:///1",
    "https://key@example.com:0/1",
  ];
  for (const input of invalid) assert.equal(parseDsn(input), null, input);
});

const BASE = "https://key@sentry.example.com:8443/prefix/5";

Deno.test("sameDsn is true for the same DSN written differently", () => {
  assert.equal(
    sameDsn(mustParse(BASE), mustParse("https://key@SENTRY.example.com:8443/prefix/5")),
    true,
  );
  assert.equal(
    sameDsn(mustParse("https://k@h/1"), mustParse("https://k@h:443/1")),
    true,
  );
});

Deno.test("sameDsn and findAllowedDsn tell apart every field", () => {
  const allowed = [mustParse(BASE)];
  const differing = {
    protocol: "http://key@sentry.example.com:8443/prefix/5",
    hostname: "https://key@sentry.example.org:8443/prefix/5",
    port: "https://key@sentry.example.com:9443/prefix/5",
    path: "https://key@sentry.example.com:8443/other/5",
    "no path": "https://key@sentry.example.com:8443/5",
    publicKey: "https://KEY@sentry.example.com:8443/prefix/5",
    projectId: "https://key@sentry.example.com:8443/prefix/6",
  };
  for (const [field, input] of Object.entries(differing)) {
    assert.equal(sameDsn(allowed[0], mustParse(input)), false, field);
    assert.equal(findAllowedDsn(mustParse(input), allowed), undefined, field);
  }
});

Deno.test("findAllowedDsn returns the configured DSN object, not the candidate", () => {
  const first = mustParse("https://a@h/1");
  const second = mustParse(BASE);
  const candidate = mustParse(BASE);
  assert.equal(findAllowedDsn(candidate, [first, second]), second);
  assert.equal(findAllowedDsn(candidate, []), undefined);
});

Deno.test("ingestUrl builds the endpoint URL, omitting a default port", () => {
  assert.equal(
    ingestUrl(mustParse("https://k@o1.ingest.sentry.io/42"), "envelope"),
    "https://o1.ingest.sentry.io/api/42/envelope/",
  );
  assert.equal(
    ingestUrl(mustParse(BASE), "envelope"),
    "https://sentry.example.com:8443/prefix/api/5/envelope/",
  );
  assert.equal(
    ingestUrl(mustParse("http://k@[::1]:9000/3"), "security"),
    "http://[::1]:9000/api/3/security/",
  );
  assert.equal(
    ingestUrl(mustParse("http://k@h:80/3"), "envelope"),
    "http://h/api/3/envelope/",
  );
});

Deno.test("parseDsn: hosts are compared as URLs see them (an IPv4 trailing dot is the same host)", () => {
  const plain = parseDsn("http://public@127.0.0.1:9000/1");
  const dotted = parseDsn("http://public@127.0.0.1.:9000/1");
  assert.ok(plain && dotted && sameDsn(plain, dotted));
  // The ingest URL is always built from the configured DSN, so an equivalent spelling in an
  // envelope can never change where the bytes go.
  assert.equal(ingestUrl(dotted!, "envelope"), "http://127.0.0.1:9000/api/1/envelope/");
});

Deno.test("parseDsn on a client's long run of slashes (60,000 in 133 gzipped bytes) keeps the rest", () => {
  // The shape that made /\/+$/ quadratic: slashes followed by more path.
  const dsn = parseDsn(`http://k@h/${"/".repeat(60_000)}a/1`);
  assert.equal(dsn?.path, `${"/".repeat(60_001)}a`);
  assert.equal(parseDsn(`http://k@h/prefix${"/".repeat(60_000)}/1`)?.path, "/prefix");
});
