/**
 * Reading a request's headers without `req.headers`, where Deno allows it.
 *
 * Deno 2.9's `Deno.serve` sends a handler's answer straight from the call while the handler has
 * left `req.headers` alone. Once it has read that property, Deno copies the headers out before
 * the request closes and finishes the answer through a promise (ext/http/00_serve.ts,
 * `finishOrReturnMaybePromise` and `requestHeadersExposed`). Reading one header that way cost
 * `GET /` about 13 µs of CPU, a fifth of the request (interleaved A/B, 6 rounds of wrk).
 *
 * `req.headers` of a served request is itself a lazy view over Deno's native request record,
 * which answers `header(name)` (values joined as `Headers.get` joins them) and `headerList`
 * (every field line). This module asks that record directly. A request without one (built in
 * JavaScript, as tests do, or under a Deno that stores it elsewhere) is read through
 * `req.headers`: the same answers, only slower. Pass names in lower case, and read while the
 * request is open (before its answer is sent): the record refuses reads after that, as
 * `req.headers` does unless it was read before.
 *
 * Security does not rest on the record agreeing with `Headers.get`: the Host read here is checked
 * against `req.url`, which Deno builds from the same record (request_target.ts), and a Deno whose
 * record differed would fail tests/server/http/request_headers_test.ts.
 */

// What Deno's lazy Headers reads from (InnerRequest in ext/http/00_serve.ts).
interface NativeRecord {
  header(name: string): string | null;
  readonly headerList: ReadonlyArray<readonly [string, string]>;
}

// The Request's own symbol for its inner request: found on the first request, then reused.
// null: this Deno has none.
let recordKey: symbol | null | undefined;

function nativeRecord(req: Request): NativeRecord | undefined {
  if (recordKey === undefined) {
    recordKey = Object.getOwnPropertySymbols(req).find((key) => key.description === "request") ??
      null;
  }
  if (recordKey === null) return undefined;
  const record = (req as unknown as Record<symbol, Partial<NativeRecord> | undefined>)[recordKey];
  // A Request made in JavaScript has an inner request too, but a plain one, without header().
  return typeof record?.header === "function" ? record as NativeRecord : undefined;
}

/** Where headers are read from: a `Headers`, or a served request's record ({@link requestHeaders}). */
export type HeaderReader = Pick<Headers, "get">;

/**
 * The request's headers read as {@link requestHeader} reads them, for code that takes a
 * `Headers`-like reader. Names in lower case.
 *
 * @example
 * contentLength(requestHeaders(req)); // without touching req.headers
 */
export function requestHeaders(req: Request): HeaderReader {
  return { get: (name) => requestHeader(req, name) };
}

/**
 * The value of one header, as `req.headers.get(name)` would answer (repeated fields joined with
 * ", "), or null when absent. `name` must be lower case.
 *
 * @example
 * requestHeader(req, "x-request-id"); // "abc-123" or null
 */
export function requestHeader(req: Request, name: string): string | null {
  const record = nativeRecord(req);
  return record === undefined ? req.headers.get(name) : record.header(name);
}

/**
 * The size of the request's header section: each field line's name and value plus four bytes
 * for `: ` and CRLF, so a name sent on many lines counts on each, as on the wire. A request read
 * through `req.headers` (no record) is counted as Headers joins it, repeated names once.
 */
export function requestHeaderBytes(req: Request): number {
  let size = 0;
  const record = nativeRecord(req);
  if (record === undefined) {
    // forEach, not for-of: Deno's Headers iterator builds an iterator and an entry per header,
    // about 6 µs for five headers against 1.2 µs.
    req.headers.forEach((value, name) => size += name.length + value.length + 4);
    return size;
  }
  const list = record.headerList;
  for (let i = 0; i < list.length; i++) size += list[i][0].length + list[i][1].length + 4;
  return size;
}
