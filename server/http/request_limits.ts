/**
 * Size limits checked before any routing: a request over them is refused with the status
 * HTTP defines for it, not a 500 and not a slow path through the app.
 */
import { plainError } from "./error_pages.ts";

/** Longest request target accepted (browsers and CDNs use 8 KiB as well). */
export const MAX_URL_BYTES = 8 * 1024;
/** Largest header section accepted, names and values together. */
export const MAX_HEADER_BYTES = 32 * 1024;

/**
 * A 414 or 431 response when a limit is passed, otherwise `null`.
 *
 * @example
 * const refused = checkRequestLimits(req); if (refused) return refused;
 */
export function checkRequestLimits(req: Request): Response | null {
  if (req.url.length > MAX_URL_BYTES) {
    return plainError(414, `URL longer than ${MAX_URL_BYTES} bytes`);
  }
  if (headerBytes(req.headers) > MAX_HEADER_BYTES) {
    return plainError(431, `request headers larger than ${MAX_HEADER_BYTES} bytes`);
  }
  return null;
}

// Names and values plus ": " and CRLF for each field (repeated fields as Headers joins them).
function headerBytes(headers: Headers): number {
  let size = 0;
  headers.forEach((value, name) => size += name.length + value.length + 4);
  return size;
}
