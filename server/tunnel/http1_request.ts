/**
 * HTTP/1.1 request framing for the tunnel's ingest client: the head from a `fetch`-style init,
 * and the body written whole or chunked.
 */

// No CR, LF or NUL (they could split the head), and nothing above U+00FF: header values are byte
// strings, one character per byte, and `fetch` refuses any other with a TypeError too.
const SAFE_HEADER = /^[^\r\n\0\u0100-\uffff]*$/;
// deno-lint-ignore no-control-regex
const ASCII = /^[\x00-\x7f]*$/;
const encoder = new TextEncoder();
const CRLF = encoder.encode("\r\n");
const LAST_CHUNK = encoder.encode("0\r\n\r\n");

/**
 * The request head up to (not including) its framing header, after `headStart` (the request
 * line and Host), or undefined for a request this client leaves to `fetch`. A header value
 * that could split the head, or that is not a byte string, is a TypeError, as in `fetch`.
 * Write it with {@link writeHead}: one byte per character.
 */
export function requestHead(headStart: string, init: RequestInit): string | undefined {
  if ((init.method ?? "GET").toUpperCase() !== "POST") return undefined;
  if (init.redirect !== "manual") return undefined;
  const headers = init.headers;
  if (headers === undefined || headers instanceof Headers || Array.isArray(headers)) {
    return undefined;
  }
  let head = headStart;
  for (const name in headers) {
    if (!Object.hasOwn(headers, name)) continue;
    const value = (headers as Record<string, string>)[name];
    const lower = name.toLowerCase();
    // The client frames the body and owns the connection.
    if (
      lower === "content-length" || lower === "transfer-encoding" || lower === "host" ||
      lower === "connection"
    ) {
      continue;
    }
    if (!SAFE_HEADER.test(name) || !SAFE_HEADER.test(value)) {
      throw new TypeError("invalid header for the ingest");
    }
    head += `${name}: ${value}\r\n`;
  }
  return head;
}

/**
 * Write a head built by {@link requestHead} into `out` at `at`, one byte per character, as
 * `fetch` sends a header: a client's `User-Agent` with a byte 0xE9 (which Deno hands over as "é")
 * goes on as 0xE9, not as UTF-8's two bytes. `out` must have `head.length` bytes of room.
 *
 * @example
 * const out = new Uint8Array(head.length); writeHead(out, 0, head);
 */
export function writeHead(out: Uint8Array, at: number, head: string): void {
  if (ASCII.test(head)) {
    encoder.encodeInto(head, out.subarray(at, at + head.length));
    return;
  }
  for (let i = 0; i < head.length; i++) out[at + i] = head.charCodeAt(i);
}

/** A head built by {@link requestHead} as the bytes it is sent as (see {@link writeHead}). */
export function headBytes(head: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(head.length);
  writeHead(out, 0, head);
  return out;
}

/** Write all of `bytes`, however the socket splits them. */
export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.byteLength;) at += await conn.write(bytes.subarray(at));
}

/** Send `body` with chunked framing, stopping with a TypeError once `closed()` says so. */
export async function writeChunked(
  conn: Deno.Conn,
  body: ReadableStream<Uint8Array<ArrayBuffer>>,
  closed: () => boolean,
): Promise<void> {
  const reader = body.getReader();
  try {
    for (;;) {
      if (closed()) throw new TypeError("connection closed");
      const { done, value } = await reader.read();
      if (done) break;
      if (value.byteLength === 0) continue;
      await writeAll(conn, encoder.encode(`${value.byteLength.toString(16)}\r\n`));
      await writeAll(conn, value);
      await writeAll(conn, CRLF);
    }
    await writeAll(conn, LAST_CHUNK);
  } catch (error) {
    reader.cancel().catch(() => {});
    throw error;
  }
}
