/**
 * Request bodies as Deno.serve hands them out: byte streams (a BYOB reader works on them), made of
 * the given chunks, each ready as soon as it is asked for.
 */

/** A byte stream of copies of `chunks`, then its end. */
export function byteStream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      // A copy: enqueueing transfers the chunk's whole buffer away from the caller.
      if (next < chunks.length) return controller.enqueue(chunks[next++].slice());
      controller.close();
      controller.byobRequest?.respond(0); // a BYOB read waiting at the end learns it is done
    },
  });
}

/** A POST to `url` whose body is {@link byteStream} of `chunks`. */
export function byteStreamPost(
  url: string,
  chunks: Uint8Array[],
  headers: Record<string, string> = {},
): Request {
  return new Request(url, { method: "POST", body: byteStream(chunks), headers });
}
