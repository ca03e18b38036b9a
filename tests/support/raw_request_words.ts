/**
 * The alphabet of the fuzz campaign's hostile requests: the word lists (methods, routes, Host
 * values, header names and values, lengths, transfer codings) and the character and token
 * arbitraries the generators in raw_request_head.ts and raw_request_body.ts build from.
 */
import fc from "fast-check";

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

/** The app's own routes, where the routes table and the handlers are. */
export const ROUTES = ["/", "/monitoring", "/healthz"];

/** Host values a URL parser may choke on, split wrongly, or look up as a property. */
export const MALFORMED_HOSTS = [
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

/** Header names the app or Deno's HTTP server may act on. */
export const HEADER_NAMES = [
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

/** Values those headers take, tricky ones, and every Object.prototype name. */
export const HEADER_VALUES = [
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

/** Content-Length values that are not one plain decimal number. */
export const CONTENT_LENGTHS = [
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

/** Transfer-Encoding values around `chunked`: case, spacing, order, repeats, unknown. */
export const TRANSFER_ENCODINGS = [
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

/** Random tokens (`tchar`s) of 1 to `maxLength` characters. */
export function token(maxLength: number): fc.Arbitrary<string> {
  return fc.string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength });
}

/** Any byte, as one latin1 character. */
export function latin1Char(): fc.Arbitrary<string> {
  return fc.integer({ min: 0, max: 0xff }).map((c) => String.fromCharCode(c));
}

/** Printable ASCII, space included. */
export function visibleChar(): fc.Arbitrary<string> {
  return fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c));
}

/** Characters hosts are made of, plus the delimiters that confuse URL parsers. */
export function hostishChar(): fc.Arbitrary<string> {
  return fc.constantFrom(..."abcz019.-_:[]@%/\\?# ~!$&'()*+,;=\x7f\x80\xff");
}

/** Characters targets are made of, plus what URL parsers treat specially. */
export function targetChar(): fc.Arbitrary<string> {
  return fc.constantFrom(..."az09/.%2e5cfF?#&=+;:@[]\\'\"<>{}|^`~!$*() \x7f\x80\xff");
}
