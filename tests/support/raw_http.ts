/**
 * HTTP/1.1 over a bare TCP socket, for requests `fetch` cannot send: any method token, any
 * Host header, absolute-form targets. Each request uses its own connection (`Connection:
 * close`) and gives up after a bounded time.
 */

/** A response as it came off the wire (the body is not de-chunked). */
export interface RawResponse {
  readonly status: number;
  /** Lower-case names; a repeated header keeps its last value. */
  readonly headers: ReadonlyMap<string, string>;
  readonly body: string;
  /** Everything received, for assertion messages. */
  readonly raw: string;
}

/** What to send: the request line's parts, headers in order, and an optional body. */
export interface RawRequest {
  readonly method: string;
  readonly target: string;
  /** Sent as given; `Host` is only sent when listed here. */
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  readonly body?: string;
}

/**
 * Send one request to `url`'s host and port and read the answer until the server closes.
 *
 * @example
 * await rawRequest(server.url, { method: "GET", target: "/", headers: [["Host", "[::1"]] });
 */
export async function rawRequest(
  url: string,
  request: RawRequest,
  timeoutMs = 5_000,
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const timer = setTimeout(() => conn.close(), timeoutMs);
  let raw = "";
  try {
    const body = request.body ?? "";
    const lines = [`${request.method} ${request.target} HTTP/1.1`];
    for (const [name, value] of request.headers ?? []) lines.push(`${name}: ${value}`);
    if (body !== "") lines.push(`Content-Length: ${new TextEncoder().encode(body).length}`);
    lines.push("Connection: close", "", body);
    await conn.write(new TextEncoder().encode(lines.join("\r\n")));
    const decoder = new TextDecoder();
    const buffer = new Uint8Array(16 * 1024);
    for (let n = await conn.read(buffer); n !== null; n = await conn.read(buffer)) {
      raw += decoder.decode(buffer.subarray(0, n), { stream: true });
    }
  } catch (error) {
    throw new Error(`no complete answer to ${request.method} ${request.target}: ${error}\n${raw}`);
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer or already */ }
  }
  return parse(raw);
}

function parse(raw: string): RawResponse {
  const split = raw.indexOf("\r\n\r\n");
  if (split === -1) throw new Error(`not an HTTP response: ${JSON.stringify(raw)}`);
  const [statusLine, ...headerLines] = raw.slice(0, split).split("\r\n");
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1]);
  const headers = new Map<string, string>();
  for (const line of headerLines) {
    const colon = line.indexOf(":");
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return { status, headers, body: raw.slice(split + 4), raw };
}
