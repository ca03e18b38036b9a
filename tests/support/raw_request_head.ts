/**
 * Generators for the head of a hostile request: its method, its target and the Host and other
 * header lines, from the word lists in raw_request_words.ts.
 */
import fc from "fast-check";
import type { RequestSpace } from "./raw_request.ts";
import {
  HEADER_NAMES,
  HEADER_VALUES,
  hostishChar,
  latin1Char,
  MALFORMED_HOSTS,
  METHODS,
  PROTOTYPE_NAMES,
  ROUTES,
  targetChar,
  token,
  visibleChar,
} from "./raw_request_words.ts";

/** Methods: standard ones, every Object.prototype name, lower case, and random tokens. */
export function methodArbitrary(): fc.Arbitrary<string> {
  return fc.oneof(
    { withCrossShrink: true },
    { weight: 4, arbitrary: fc.constantFrom(...METHODS) },
    { weight: 3, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
    { weight: 1, arbitrary: fc.constantFrom("get", "Get", "CONNECT", "PRI", "M-SEARCH") },
    { weight: 2, arbitrary: token(12) },
    // A few bytes no token may hold: the parser must refuse, not the app crash.
    { weight: 1, arbitrary: fc.string({ unit: latin1Char(), minLength: 1, maxLength: 6 }) },
  );
}

/** Host header values: valid, the known malformed ones, and random junk. */
export function hostArbitrary(port: number): fc.Arbitrary<string> {
  return fc.oneof(
    { withCrossShrink: true },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        "127.0.0.1",
        `127.0.0.1:${port}`,
        "localhost",
        "example.com",
        "[::1]",
        "[::1]:8080",
        "a-b.c_d",
      ),
    },
    { weight: 3, arbitrary: fc.constantFrom(...MALFORMED_HOSTS) },
    { weight: 2, arbitrary: fc.string({ unit: hostishChar(), maxLength: 20 }) },
  );
}

/** Request targets: origin-form against the app's paths, absolute-form, `*`, odd, long. */
export function targetArbitrary(space: RequestSpace): fc.Arbitrary<string> {
  // The routes most: that is where the routes table and the handlers are.
  const base = fc.oneof(
    { withCrossShrink: true },
    { weight: 3, arbitrary: fc.constantFrom(...ROUTES) },
    { weight: 2, arbitrary: fc.constantFrom(...space.staticPaths) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "/build/",
        "/build/chunks/",
        "/build/x.js",
        "/nope",
        "//",
        "/%2e%2e/deno.json",
      ),
    },
  );
  const suffix = fc.oneof(
    { withCrossShrink: true },
    { weight: 4, arbitrary: fc.constant("") },
    { weight: 1, arbitrary: fc.constantFrom("/", "/.", "/..", "?", "#", "?a=1#f", "%00", "%zz") },
    { weight: 1, arbitrary: fc.string({ unit: targetChar(), maxLength: 16 }).map((s) => "?" + s) },
    { weight: 1, arbitrary: fc.string({ unit: targetChar(), maxLength: 16 }) },
    { weight: 1, arbitrary: fc.string({ unit: latin1Char(), maxLength: 8 }) },
  );
  const origin = fc.tuple(base, suffix).map(([b, s]) => b + s);
  return fc.oneof(
    { withCrossShrink: true },
    { weight: 8, arbitrary: origin },
    {
      weight: 2,
      arbitrary: fc.tuple(
        fc.constantFrom("http://", "https://", "HTTP://", "ftp://"),
        hostArbitrary(space.port),
        origin,
      )
        .map(([scheme, host, path]) => scheme + host + path),
    },
    { weight: 1, arbitrary: fc.constantFrom("*", `127.0.0.1:${space.port}`, "", "healthz", "?") },
    {
      weight: 1,
      arbitrary: fc.tuple(base, fc.integer({ min: 7_000, max: 9_000 })).map(([b, n]) =>
        b + "?" + "a".repeat(n)
      ),
    },
    { weight: 1, arbitrary: fc.string({ unit: latin1Char(), minLength: 1, maxLength: 30 }) },
  );
}

/** Other headers: known names with tricky values, random tokens, odd bytes, many, huge. */
export function otherHeadersArbitrary(): fc.Arbitrary<[string, string][]> {
  const name = fc.oneof(
    { withCrossShrink: true },
    { weight: 3, arbitrary: fc.constantFrom(...HEADER_NAMES) },
    { weight: 2, arbitrary: token(16).filter((n) => !/^(sentry-trace|baggage)$/i.test(n)) },
    { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) },
  );
  const value = fc.oneof(
    { withCrossShrink: true },
    { weight: 3, arbitrary: fc.constantFrom(...HEADER_VALUES) },
    { weight: 2, arbitrary: fc.string({ unit: visibleChar(), maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: latin1Char(), maxLength: 20 }) },
  );
  const pair = fc.tuple(name, value).map(([n, v]) => [n, v] as [string, string]);
  return fc.oneof(
    { withCrossShrink: true },
    { weight: 8, arbitrary: fc.array(pair, { maxLength: 6 }) },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 90, max: 130 }).map((n) =>
        Array.from({ length: n }, (_, i) => [`X-H${i}`, "v"] as [string, string])
      ),
    },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 30_000, max: 34_000 }).map((n) =>
        [["X-Big", "b".repeat(n)]] as [string, string][]
      ),
    },
  );
}
