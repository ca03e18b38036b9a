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

// A DNS name or IPv4 address (letters, digits, `-`, `.`, `_`, `~`) or a bracketed IPv6 literal,
// then an optional port. RFC 3986 allows more in a reg-name (sub-delims, %-escapes), but no
// browser sends them and each one is a way to smuggle a delimiter into a rebuilt URL.
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::([0-9]{0,5}))?$/;
// Longest DNS name (253) plus brackets and `:65535`.
const MAX_HOST_LENGTH = 264;

/** Whether a Host header (or an absolute target's authority) is a plain `host[:port]`. */
export function isValidHost(host: string): boolean {
  if (host.length > MAX_HOST_LENGTH) return false;
  const match = HOST.exec(host);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
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
