/**
 * HTTP/1.1 request framing for the tunnel's ingest client: the head from a `fetch`-style init,
 * and the body written whole or chunked.
 */

const SAFE_HEADER = /^[^\r\n\0]*$/;
const encoder = new TextEncoder();
const CRLF = encoder.encode("\r\n");
const LAST_CHUNK = encoder.encode("0\r\n\r\n");

/**
 * The request head up to (not including) its framing header, after `headStart` (the request
 * line and Host), or undefined for a request this client leaves to `fetch`. A header value
 * that could split the head is a TypeError, as in `fetch`.
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
