/**
 * A tunnel upload that is still arriving: its head and the first part of its body are sent
 * over a raw socket, the rest only when the test says so. What shutdown tests send a signal
 * into the middle of.
 */

/** A slow upload's second half, and the server's answer to it. */
export interface SlowUpload {
  /** Send the rest of the body and read the whole answer until the server closes. */
  finish(): Promise<string>;
}

/**
 * POST `body` to `/monitoring` on `url`'s host and port, sending `firstPart` bytes of it now.
 *
 * @example
 * const upload = await startUpload(server.url, envelope, 70 * 1024);
 * server.process.kill("SIGTERM");
 * assert.match(await upload.finish(), /^HTTP\/1\.1 200 /);
 */
export async function startUpload(
  url: string,
  body: Uint8Array,
  firstPart: number,
): Promise<SlowUpload> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const head = `POST /monitoring HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n` +
    `Content-Type: application/x-sentry-envelope\r\nContent-Length: ${body.length}\r\n\r\n`;
  await writeAll(conn, new TextEncoder().encode(head));
  await writeAll(conn, body.subarray(0, firstPart));
  return {
    async finish() {
      await writeAll(conn, body.subarray(firstPart));
      let text = "";
      const decoder = new TextDecoder();
      for await (const chunk of conn.readable) text += decoder.decode(chunk, { stream: true });
      return text;
    },
  };
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let sent = 0; sent < bytes.length;) sent += await conn.write(bytes.subarray(sent));
}
