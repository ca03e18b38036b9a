/** Size (414, 431) and target, checked before routing. Deno builds `req.url` from Host unchecked
 * (Host `[::1` breaks `new URL`, `x/healthz#` routes to /healthz): Host checked, path cut here. */
import { plainError } from "./error_pages.ts";

/** Longest request target accepted (browsers and CDNs use 8 KiB as well). */
export const MAX_URL_BYTES = 8 * 1024;
/** Largest header section accepted, names and values together. */
export const MAX_HEADER_BYTES = 32 * 1024;

/** A 414 or 431 response when a limit is passed, otherwise `null`. */
export function checkRequestLimits(req: Request): Response | null {
  if (req.url.length > MAX_URL_BYTES) {
    return plainError(414, `URL longer than ${MAX_URL_BYTES} bytes`);
  }
  // Names and values plus ": " and CRLF for each field (repeated fields as Headers joins them).
  let headerBytes = 0;
  req.headers.forEach((value, name) => headerBytes += name.length + value.length + 4);
  if (headerBytes > MAX_HEADER_BYTES) {
    return plainError(431, `request headers larger than ${MAX_HEADER_BYTES} bytes`);
  }
  return null;
}

// A DNS name, IPv4 address or bracketed IPv6 literal, then an optional port. RFC 3986 allows more
// (sub-delims, %-escapes), but browsers send none, and each could smuggle a delimiter into a URL.
const HOST = /^(?:[A-Za-z0-9._~-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{0,5}))?$/;
// Longest DNS name (253) plus brackets and `:65535`.
const MAX_HOST_LENGTH = 264;
const ABSOLUTE = /^https?:\/\/([^/?#]*)([^?#]*)/;

/** Whether a Host header (or an absolute target's authority) is a plain `host[:port]`. */
export function isValidHost(host: string): boolean {
  const match = host.length <= MAX_HOST_LENGTH ? HOST.exec(host) : null;
  // `new URL` refuses some of what HOST allows (`256.0.0.1`, `xn--a`); loaders parse `req.url`.
  return match !== null && Number(match[1] ?? 0) <= 65535 && URL.canParse(`http://${host}/`);
}

/** The path to route on (`/...`, no query or fragment), from `req.url` and Host as received; with
 * `reason`, a request to answer 400, whose path (if it can be told) is for the log, not routing. */
export function parseRequestTarget(
  url: string,
  host: string | null,
): { readonly path: string; readonly reason?: string } {
  // An empty or missing Host is allowed (HTTP/1.0): Deno then writes `localhost:<port>`.
  if (host && !isValidHost(host)) {
    return { reason: "malformed Host header", path: requestedPath(url, host) };
  }
  const match = ABSOLUTE.exec(url);
  if (match === null) return { reason: "unsupported request target", path: "" };
  // With the Host checked, a bad authority can only come from an absolute-form target (or, with
  // no Host, Deno's `localhost:<port>`); the usual one is the Host itself, checked once.
  if (match[1] !== host && !isValidHost(match[1])) {
    return { reason: "malformed request target", path: "" };
  }
  // An empty path is `/` (RFC 9112, 3.2.4).
  return { path: match[2] || "/" };
}

/** The host a request was sent to as `req.url` has it (from Host, or an absolute target): lower
 * case, an IPv6 address in brackets, no port, no final dot (`example.com.` is `example.com`). */
export function requestHost(url: string): string {
  return (ABSOLUTE.exec(url)?.[1] ?? "").replace(/\.?(:\d*)?$/, "").toLowerCase();
}

// For the log line of a refused request: the origin-form target after the pasted Host.
function requestedPath(url: string, host: string): string {
  for (const scheme of ["http://", "https://"]) {
    const rest = url.startsWith(scheme + host) ? url.slice(scheme.length + host.length) : "";
    if (rest.startsWith("/")) return rest.split(/[?#]/, 1)[0];
  }
  return "";
}
