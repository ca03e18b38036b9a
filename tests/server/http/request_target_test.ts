import assert from "node:assert/strict";
import fc from "fast-check";
import {
  checkRequestLimits,
  isValidHost,
  MAX_HEADER_BYTES,
  MAX_URL_BYTES,
  parseRequestTarget,
  requestHost,
} from "../../../server/http/request_target.ts";

// The inputs are req.url and the Host header exactly as Deno 2.9.6 builds them from a raw
// request (found with a raw-socket probe): "http://" + Host + target for an origin-form target,
// the target itself for an absolute-form one, and localhost:<port> when Host is missing.

Deno.test("parseRequestTarget: the path of an origin-form target, without query or fragment", () => {
  assert.deepEqual(parseRequestTarget("http://a.example/x/y?q=1#f", "a.example"), { path: "/x/y" });
  assert.deepEqual(parseRequestTarget("http://a.example/", "a.example"), { path: "/" });
  assert.deepEqual(parseRequestTarget("http://a.example/#x", "a.example"), { path: "/" });
  assert.deepEqual(parseRequestTarget("http://[::1]:8000/a", "[::1]:8000"), { path: "/a" });
  assert.deepEqual(parseRequestTarget("http://localhost:4000/a", null), { path: "/a" });
  assert.deepEqual(parseRequestTarget("http://localhost:4000/a", ""), { path: "/a" });
});

Deno.test("parseRequestTarget: the path is not rewritten (no dot segments, backslashes, escapes)", () => {
  for (
    const path of ["/a/../healthz", "/%2e%2e/healthz", "/a\\b", "//evil.example/x", "/caf\u00e9"]
  ) {
    assert.deepEqual(parseRequestTarget(`http://x${path}`, "x"), { path });
  }
});

Deno.test("parseRequestTarget: a malformed Host is refused, whatever the route", () => {
  const cases: [string, string][] = [
    ["http://[::1/", "[::1"],
    ["http://a b/", "a b"],
    ["http://127.0.0.1:99999/", "127.0.0.1:99999"],
    ["http://a%2fb/a", "a%2fb"],
    ["http://u:p@x/a", "u:p@x"],
    ["http://a\tb/a", "a\tb"],
    ["http://b\u00fccher.de/a", "b\u00fccher.de"],
    ["http://x:80:80/a", "x:80:80"],
    ["http://[v1.x]/a", "[v1.x]"],
    ["http://256.0.0.1/a", "256.0.0.1"],
    ["http://xn--a/a", "xn--a"],
    [`http://${"a".repeat(300)}/a`, "a".repeat(300)],
  ];
  for (const [url, host] of cases) {
    const result = parseRequestTarget(url, host);
    assert.ok(result.reason !== undefined, host);
    assert.equal(result.reason, "malformed Host header");
  }
});

Deno.test("parseRequestTarget: a Host that would move the target into a query or fragment is refused", () => {
  for (const host of ["x/healthz#", "x/healthz?", "x\\healthz#", "x/monitoring#", "x?", "x#"]) {
    const result = parseRequestTarget(`http://${host}/nothing-here`, host);
    assert.ok(result.reason !== undefined, host);
    assert.equal(result.reason, "malformed Host header");
    // The log still shows what was asked for, never the path the Host pointed at.
    assert.equal(result.path, "/nothing-here");
  }
});

Deno.test("parseRequestTarget: an absolute-form target routes on its own path", () => {
  assert.deepEqual(parseRequestTarget("https://evil.example/healthz?q", "x"), { path: "/healthz" });
  assert.deepEqual(parseRequestTarget("http://evil.example", "x"), { path: "/" });
  assert.deepEqual(parseRequestTarget("http://evil.example?q", "x"), { path: "/" });
  // CONNECT's authority-form target: Deno writes it after http:// with no path.
  assert.deepEqual(parseRequestTarget("http://evil.example:443", "evil.example:443"), {
    path: "/",
  });
});

Deno.test("parseRequestTarget: other schemes and bad authorities in the target are refused", () => {
  const ftp = parseRequestTarget("ftp://evil.example/p", "x");
  assert.ok(ftp.reason !== undefined);
  assert.equal(ftp.reason, "unsupported request target");
  for (const url of ["http://a\\b/healthz", "http://u@x/a", "http:///a", "http://a b/"]) {
    const result = parseRequestTarget(url, "x");
    assert.ok(result.reason !== undefined, url);
    assert.equal(result.reason, "malformed request target");
  }
});

Deno.test("isValidHost: names, IPv4, bracketed IPv6, optional port up to 65535", () => {
  for (const host of ["a", "a.example", "a.example.", "A-B_c~d", "10.0.0.1:65535", "[::1]", "x:"]) {
    assert.ok(isValidHost(host), host);
  }
  for (
    const host of ["", ":80", "a:65536", "a:123456", "[::1", "::1", "a/b", "a?b", "a#b", "a@b"]
  ) {
    assert.ok(!isValidHost(host), host);
  }
});

Deno.test("parseRequestTarget: any valid Host gives the target's own path; anything else is refused", () => {
  const hostChar = fc.constantFrom(..."aZ09.-_~/?#\\@ :[]%\t");
  fc.assert(
    fc.property(
      fc.string({ unit: hostChar, maxLength: 12 }),
      fc.webPath(),
      fc.option(fc.webQueryParameters()),
      fc.option(fc.webFragments()),
      (host, webPath, query, fragment) => {
        const path = webPath === "" ? "/" : webPath;
        const target = path + (query === null ? "" : `?${query}`) +
          (fragment === null ? "" : `#${fragment}`);
        // As Deno builds req.url: an empty Host is replaced by the listening address.
        const authority = host === "" ? "localhost:1234" : host;
        const result = parseRequestTarget(`http://${authority}${target}`, host);
        if (host !== "" && !isValidHost(host)) return result.reason !== undefined;
        return result.reason === undefined && result.path === path;
      },
    ),
  );
});

Deno.test("checkRequestLimits: ordinary requests pass", () => {
  assert.equal(checkRequestLimits(new Request("http://x/a?b=c")), null);
});

Deno.test("checkRequestLimits: 414 for a long URL", async () => {
  const res = checkRequestLimits(new Request(`http://x/?q=${"a".repeat(MAX_URL_BYTES)}`));
  assert.equal(res?.status, 414);
  assert.match(await res!.text(), /^URL longer than \d+ bytes\n$/);
});

Deno.test("checkRequestLimits: 431 for large headers", async () => {
  const headers = new Headers();
  for (let i = 0; i < 40; i++) headers.set(`x-h${i}`, "v".repeat(MAX_HEADER_BYTES / 32));
  const res = checkRequestLimits(new Request("http://x/", { headers }));
  assert.equal(res?.status, 431);
  await res!.body?.cancel();
});

Deno.test("requestHost: lower case, no port, no final dot; IPv6 in brackets", () => {
  const cases = [
    ["http://Example.COM:8000/a?b", "example.com"],
    ["http://example.com./", "example.com"],
    ["http://[::1]:80/", "[::1]"],
    ["http://[::1]/", "[::1]"],
    ["http://127.0.0.1/", "127.0.0.1"],
    ["https://a.example", "a.example"],
  ];
  for (const [url, host] of cases) assert.equal(requestHost(url), host, url);
});
