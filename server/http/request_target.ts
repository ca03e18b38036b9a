/**
 * The request's path, taken once and defensively from what the client sent.
 *
 * Deno builds `req.url` by pasting the Host header in front of the request target
 * (`http://` + Host + target) without checking either, and passes an absolute-form target
 * (`GET https://a.example/x HTTP/1.1`) through as it is. So `new URL(req.url)` throws on a Host
 * such as `[::1` or `a b`, and a Host such as `x/healthz#` moves the real target into the
 * fragment and routes to `/healthz`. Here the Host is checked first, and the path is cut from the
 * URL by hand: no dot-segment or backslash rewriting, and no `new URL()` on the hot path.
 */

/** The path to route on (always starts with `/`, no query, no fragment). */
export interface RequestTarget {
  readonly path: string;
}

/** A request whose Host or target cannot be trusted: answer 400 with `reason`. */
export interface BadTarget {
  /** One line for the client and the log. */
  readonly reason: string;
  /** What the client asked for, as far as it can be told: for the log only, never for routing. */
  readonly path: string;
}

// Longest DNS name (253) plus brackets and `:65535`.
const MAX_HOST_LENGTH = 264;

/**
 * Whether a Host header (or an absolute target's authority) is a plain `host[:port]`: a DNS
 * name or IPv4 address (letters, digits, `-`, `.`, `_`, `~`) or a bracketed IPv6 literal, then
 * an optional port up to 65535. RFC 3986 allows more in a reg-name (sub-delims, %-escapes), but
 * browsers send none of it, and each is a way to smuggle a delimiter into a rebuilt URL.
 */
export function isValidHost(host: string): boolean {
  const length = host.length;
  if (length === 0 || length > MAX_HOST_LENGTH) return false;
  let i = 0;
  if (host.charCodeAt(0) === 0x5b /* [ */) {
    i = 1;
    while (i < length && isIpv6Char(host.charCodeAt(i))) i++;
    if (i === 1 || host.charCodeAt(i) !== 0x5d /* ] */) return false;
    i++;
  } else {
    while (i < length && isNameChar(host.charCodeAt(i))) i++;
    if (i === 0) return false;
  }
  if (i === length) return true;
  if (host.charCodeAt(i) !== 0x3a /* : */ || length - i - 1 > 5) return false;
  let port = 0;
  for (i++; i < length; i++) {
    const code = host.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
    port = port * 10 + code - 0x30;
  }
  return port <= 65535;
}

/**
 * The path of a request, from `req.url` and the Host header as Deno received them, or the
 * reason the request is refused.
 *
 * @example
 * parseRequestTarget("http://a.example/x?y", "a.example"); // { path: "/x" }
 * parseRequestTarget("http://x/healthz#/y", "x/healthz#"); // { reason: "malformed Host header", ... }
 */
export function parseRequestTarget(url: string, host: string | null): RequestTarget | BadTarget {
  // An empty or missing Host is allowed (HTTP/1.0): Deno then writes `localhost:<port>`.
  if (host !== null && host !== "" && !isValidHost(host)) {
    return { reason: "malformed Host header", path: requestedPath(url, host) };
  }
  const start = url.startsWith("http://") ? 7 : url.startsWith("https://") ? 8 : -1;
  if (start === -1) return { reason: "unsupported request target", path: "" };
  // The usual case, an origin-form target after the (checked) Host: nothing more to check.
  if (host !== null && host !== "" && url.startsWith(host, start)) {
    const end = start + host.length;
    if (end === url.length || isDelimiter(url.charCodeAt(end))) return { path: pathOf(url, end) };
  }
  let end = start;
  while (end < url.length && !isDelimiter(url.charCodeAt(end))) end++;
  // With the Host checked, a bad authority can only come from an absolute-form target.
  if (!isValidHost(url.slice(start, end))) {
    return { reason: "malformed request target", path: "" };
  }
  return { path: pathOf(url, end) };
}

/** Whether a parse result is a refusal. */
export function isBadTarget(target: RequestTarget | BadTarget): target is BadTarget {
  return "reason" in target;
}

// The path from `from` up to the query or fragment; an empty path is `/` (RFC 9112, 3.2.4).
function pathOf(url: string, from: number): string {
  let end = from;
  while (end < url.length) {
    const code = url.charCodeAt(end);
    if (code === QUESTION || code === HASH) break;
    end++;
  }
  return end === from ? "/" : url.slice(from, end);
}

// For the log line of a refused request: the origin-form target after the pasted Host.
function requestedPath(url: string, host: string): string {
  for (const scheme of ["http://", "https://"]) {
    const prefix = scheme + host;
    if (url.startsWith(prefix) && url.charCodeAt(prefix.length) === SLASH) {
      return pathOf(url, prefix.length);
    }
  }
  return "";
}

const SLASH = 0x2f;
const QUESTION = 0x3f;
const HASH = 0x23;

function isDelimiter(code: number): boolean {
  return code === SLASH || code === QUESTION || code === HASH;
}

function isNameChar(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) || code === 0x2d || code === 0x2e || code === 0x5f ||
    code === 0x7e; // a-z A-Z 0-9 - . _ ~
}

function isIpv6Char(code: number): boolean {
  return (code >= 0x30 && code <= 0x3a) || (code >= 0x61 && code <= 0x66) ||
    (code >= 0x41 && code <= 0x46) || code === 0x2e; // 0-9 : a-f A-F .
}
