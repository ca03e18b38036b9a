/**
 * The one reading of a Content-Length header, for requests (the tunnel's size check) and
 * responses (the request log's byte count).
 *
 * Handlers that know their size set the header themselves even though `Deno.serve` would: a
 * `Response` exposes no body size, and reading `res.body` to measure it would turn a byte body
 * into a stream and cost Deno its fast path. So the header is where the log finds the size.
 */
/**
 * A Content-Length that is a plain decimal number of at most 15 digits, else null. The same
 * number repeated (`42, 42`: the field sent twice, which Deno accepts and joins; it refuses
 * differing ones) is that number, as RFC 9110 (8.6) allows; differing numbers are null.
 *
 * @example
 * contentLength(new Headers({ "content-length": "42" })); // 42
 */
export function contentLength(headers: Pick<Headers, "get">): number | null {
  const value = headers.get("content-length");
  if (value === null) return null;
  if (PLAIN.test(value)) return Number(value);
  if (!REPEATED.test(value)) return null;
  // Compared as numbers, as Deno frames the body: it takes `61` and `061` as one length.
  const [first, ...rest] = value.split(",").map(Number);
  return rest.every((length) => length === first) ? first : null;
}

const PLAIN = /^\d{1,15}$/;
// At most as long as a header section the app accepts; the test is linear in its length.
const REPEATED = /^\d{1,15}(?:[ \t]*,[ \t]*\d{1,15})+$/;
