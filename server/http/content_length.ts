/**
 * The one reading of a Content-Length header, for requests (the tunnel's size check) and
 * responses (the request log's byte count).
 *
 * Handlers that know their size set the header themselves even though `Deno.serve` would: a
 * `Response` exposes no body size, and reading `res.body` to measure it would turn a byte body
 * into a stream and cost Deno its fast path. So the header is where the log finds the size.
 */
import type { HeaderReader } from "./request_headers.ts";

/**
 * A Content-Length that is a plain decimal number of at most 15 digits, else null.
 *
 * @example
 * contentLength(new Headers({ "content-length": "42" })); // 42
 */
export function contentLength(headers: HeaderReader): number | null {
  const value = headers.get("content-length");
  return value !== null && /^\d{1,15}$/.test(value) ? Number(value) : null;
}
