/**
 * Hostile HTTP/1.1 requests as data: fast-check arbitraries for every part a client controls
 * (method, target, version, Host, other headers, body framing, how the bytes are split into
 * writes) and the pure rendering of one request to the bytes sent on the wire.
 *
 * @example
 * const arb = rawRequestArbitrary({ port, staticPaths: ["/robots.txt"], nearMissDsns: [] });
 * fc.sample(arb, 1).map(renderRequest);
 */
import fc from "fast-check";

/** One request exactly as it will be written: strings are latin1, one char per byte. */
export interface RawRequest {
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  /** Offsets where the rendered bytes are cut into separate writes (taken modulo length). */
  readonly cuts: readonly number[];
}

/** What the generator needs to know about the server under test. */
export interface RequestSpace {
  readonly port: number;
  /** Static file paths that exist (e.g. `/robots.txt`, the hashed client entry). */
  readonly staticPaths: readonly string[];
  /** DSNs that look like the server's own but differ (the tunnel must never forward them). */
  readonly nearMissDsns: readonly string[];
  /** Request bodies that are compressed envelopes naming a near-miss DSN, by encoding. */
  readonly compressedBodies: readonly { encoding: string; body: string }[];
}

/** RFC 9110 `tchar`: every character a method or header name may use. */
export const TOKEN_CHARS =
  "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Every own property of Object.prototype, the names a plain-object lookup would find. */
export const PROTOTYPE_NAMES: readonly string[] = [
  ...Object.getOwnPropertyNames(Object.prototype),
  "prototype",
];

/** The methods HTTP defines (CONNECT aside), as servers usually know them. */
export const METHODS: readonly string[] = [
  "GET",
  "HEAD",
  "POST",
  "PUT",
  "DELETE",
  "OPTIONS",
  "PATCH",
  "TRACE",
];
const ROUTES = ["/", "/monitoring", "/healthz"];
const MALFORMED_HOSTS = [
  "[::1",
  "a b",
  "127.0.0.1:99999",
  "x/healthz#",
  "x/monitoring?",
  "",
  " ",
  "[",
  "]",
  ":",
  "::",
  "a:b:c",
  "@",
  "user@host",
  "user:pw@127.0.0.1",
  "x?y",
  "x#y",
  "x/y",
  "a\\b",
  "%41",
  "[fe80::1%eth0]",
  "[::1]x",
  "127.0.0.1:",
  ":80",
  "127.0.0.1:-1",
  "127.0.0.1:0x50",
  "h\x7f",
  "h\x80\xff",
  "\ttab",
  "a".repeat(300),
  "constructor",
  "__proto__",
];
const HEADER_NAMES = [
  "Accept",
  "Accept-Encoding",
  "Content-Type",
  "Content-Encoding",
  "Cookie",
  "Connection",
  "Expect",
  "If-None-Match",
  "If-Modified-Since",
  "Range",
  "Upgrade",
  "User-Agent",
  "X-Forwarded-For",
  "X-Forwarded-Proto",
  "X-Forwarded-Host",
  "X-Request-Id",
  "Origin",
  "Trailer",
  "TE",
];
const HEADER_VALUES = [
  "",
  "*",
  "gzip",
  "br",
  "deflate",
  "identity",
  "gzip, br",
  "br;q=0",
  "x-gzip",
  "compress",
  "zstd",
  "100-continue",
  "close",
  "keep-alive",
  "upgrade",
  "websocket",
  "h2c",
  "bytes=0-0",
  "bytes=-1,5-",
  '"etag"',
  'W/"x"',
  "1.2.3.4, 5.6.7.8",
  "::1",
  "https",
  "text/plain",
  "application/x-sentry-envelope",
  ...PROTOTYPE_NAMES,
];
const CONTENT_LENGTHS = [
  "-1",
  "+5",
  "0x5",
  "1e3",
  "5.0",
  "",
  "abc",
  "5, 5",
  "5,6",
  " 5",
  "18446744073709551616",
  "99999999999999999999",
  "9007199254740993",
  "2147483648",
];
const TRANSFER_ENCODINGS = [
  "chunked",
  "Chunked",
  " chunked",
  "gzip, chunked",
  "chunked, gzip",
  "chunked, chunked",
  "identity",
  "identity, chunked",
  "x",
  "",
];

/** Sent bodies: junk, envelope-like text for near-miss DSNs, or compressed envelopes. */
function payloadArbitrary(space: RequestSpace): fc.Arbitrary<Framed> {
  const junk = fc.string({ unit: latin1Char(), maxLength: 200 });
  const plain = junk.map((body) => ({ body, headers: [] as [string, string][] }));
  const envelope = fc.tuple(fc.constantFrom(...space.nearMissDsns), junk).map(([dsn, rest]) => ({
    body: `${JSON.stringify({ dsn })}\n${rest}`,
    headers: [] as [string, string][],
  }));
  const parts: fc.Arbitrary<Framed>[] = [plain, envelope];
  if (space.compressedBodies.length > 0) {
    parts.push(
      fc.constantFrom(...space.compressedBodies).map(({ encoding, body }) => ({
        body,
        headers: [["Content-Encoding", encoding]] as [string, string][],
      })),
    );
  }
  return fc.oneof({ withCrossShrink: true }, ...parts);
}

/** A body and the headers that frame it. */
type Framed = { body: string; headers: [string, string][] };

/** How the body is framed: no length, a length (right, wrong, odd, repeated) or chunked. */
function framedBodyArbitrary(space: RequestSpace): fc.Arbitrary<Framed> {
  return payloadArbitrary(space).chain(({ body, headers }): fc.Arbitrary<Framed> => {
    const framed = (...extra: [string, string][]): Framed => ({
      body,
      headers: [...headers, ...extra],
    });
    return fc.oneof(
      { withCrossShrink: true },
      fc.constant(framed()),
      fc.constant(framed(cl(body.length))),
      fc.integer({ min: -3, max: 3 }).map((delta) => framed(cl(Math.max(0, body.length + delta)))),
      fc.constantFrom(...CONTENT_LENGTHS).map((value) => framed(["Content-Length", value])),
      fc.integer({ min: -2, max: 2 }).map((delta) =>
        framed(cl(body.length), cl(Math.max(0, body.length + delta)))
      ),
      chunkedArbitrary(body).map(({ encoded, te, withLength }) => ({
        body: encoded,
        headers: [
          ...headers,
          ["Transfer-Encoding", te] as [string, string],
          ...(withLength ? [cl(body.length)] : []),
        ],
      })),
    );
  });
}

/** A chunked encoding of `body`: sizes, hex spelling, extensions, trailers, bad sizes. */
function chunkedArbitrary(
  body: string,
): fc.Arbitrary<{ encoded: string; te: string; withLength: boolean }> {
  return fc.record({
    cuts: fc.array(fc.nat({ max: Math.max(0, body.length) }), { maxLength: 4 }),
    upper: fc.boolean(),
    zeros: fc.nat({ max: 3 }),
    extension: fc.constantFrom("", ";a=b", ";x", '; q="a;b"', ";" + "e".repeat(100)),
    badSize: fc.option(fc.constantFrom("zz", "-1", "ffffffffffffffffff", "", " 1", "0x1"), {
      freq: 6,
    }),
    trailer: fc.constantFrom("", "X-T: 1\r\n", "Content-Length: 5\r\n"),
    terminated: fc.boolean(),
    te: fc.oneof(
      { withCrossShrink: true },
      { weight: 4, arbitrary: fc.constant("chunked") },
      { weight: 1, arbitrary: fc.constantFrom(...TRANSFER_ENCODINGS) },
    ),
    withLength: fc.boolean(),
  }).map((c) => {
    const bounds = [...new Set([0, ...c.cuts, body.length])].sort((a, b) => a - b);
    let encoded = "";
    for (let i = 1; i < bounds.length; i++) {
      const piece = body.slice(bounds[i - 1], bounds[i]);
      let size = "0".repeat(c.zeros) + piece.length.toString(16);
      if (c.upper) size = size.toUpperCase();
      if (c.badSize !== null && i === 1) size = c.badSize;
      encoded += `${size}${c.extension}\r\n${piece}\r\n`;
    }
    if (c.terminated) encoded += `0${c.extension}\r\n${c.trailer}\r\n`;
    return { encoded, te: c.te, withLength: c.withLength };
  });
}

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
function otherHeadersArbitrary(): fc.Arbitrary<[string, string][]> {
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

/** A whole hostile request, headers in a random order. */
export function rawRequestArbitrary(space: RequestSpace): fc.Arbitrary<RawRequest> {
  const hosts = fc.oneof(
    { withCrossShrink: true },
    { weight: 6, arbitrary: hostArbitrary(space.port).map((h) => [h]) },
    { weight: 1, arbitrary: fc.constant([] as string[]) },
    { weight: 1, arbitrary: fc.array(hostArbitrary(space.port), { minLength: 2, maxLength: 2 }) },
  );
  const version = fc.oneof(
    { withCrossShrink: true },
    { weight: 12, arbitrary: fc.constant("HTTP/1.1") },
    { weight: 2, arbitrary: fc.constant("HTTP/1.0") },
    { weight: 1, arbitrary: fc.constantFrom("HTTP/1.2", "HTTP/2.0", "http/1.1", "HTTP/0.9", "") },
  );
  return fc.record({
    method: methodArbitrary(),
    target: targetArbitrary(space),
    version,
    hosts,
    other: otherHeadersArbitrary(),
    framed: fc.oneof(
      { withCrossShrink: true },
      { weight: 1, arbitrary: fc.constant({ body: "", headers: [] as [string, string][] }) },
      { weight: 2, arbitrary: framedBodyArbitrary(space) },
    ),
    cuts: fc.array(fc.nat(), { maxLength: 4 }),
  }).map(({ method, target, version, hosts, other, framed, cuts }) => ({
    method,
    target,
    version,
    headers: [
      ...hosts.map((h) => ["Host", h] as [string, string]),
      ...other,
      ...framed.headers,
    ],
    body: framed.body,
    cuts,
  }));
}

/** The bytes of `request`, one byte per char (chars above 0xff are not generated). */
export function renderRequest(request: RawRequest): Uint8Array {
  const head = `${request.method} ${request.target} ${request.version}\r\n` +
    request.headers.map(([name, value]) => `${name}: ${value}\r\n`).join("") + "\r\n";
  const text = head + request.body;
  return Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);
}

/** `bytes` split at the request's cut points, for separate writes. */
export function splitRequest(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const bounds = [0, ...at.filter((c) => c > 0 && c < bytes.length), bytes.length];
  const pieces: Uint8Array[] = [];
  for (let i = 1; i < bounds.length; i++) pieces.push(bytes.subarray(bounds[i - 1], bounds[i]));
  return pieces;
}

/** A string as latin1 bytes mapped back to one char per byte (for compressed bodies). */
export function bytesToLatin1(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return text;
}

function cl(n: number): [string, string] {
  return ["Content-Length", String(n)];
}

function token(maxLength: number): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength });
}

function latin1Char(): fc.Arbitrary<string> {
  return fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c));
}

function visibleChar(): fc.Arbitrary<string> {
  return fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
}

// Characters hosts and targets are made of, plus the delimiters that confuse URL parsers.
function hostishChar(): fc.Arbitrary<string> {
  return fc.constantFrom(..."abcz019.-_:[]@%/\\?# ~!$&'()*+,;=\x7f\x80\xff");
}

function targetChar(): fc.Arbitrary<string> {
  return fc.constantFrom(..."az09/.%2e5cfF?#&=+;:@[]\\'\"<>{}|^`~!$*() \x7f\x80\xff");
}
