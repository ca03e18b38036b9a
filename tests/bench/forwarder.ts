/**
 * The tunnel's baseline: the least a Sentry tunnel on `Deno.serve` and `fetch` does. It reads
 * the body whole, checks the DSN in the envelope's first line, forwards the bytes and relays the
 * status. No cap, no timeout, no rate limit, no compressed bodies: the gap from it to the tunnel
 * is what the tunnel's safety costs. With `stream` it reads only the first chunk, checks it, and
 * sends the rest as the ingest takes it, as the tunnel must with a large body: the gap from the
 * buffering forwarder to that is what streaming itself costs.
 *
 *   deno run --allow-net=127.0.0.1 tests/bench/forwarder.ts DSN [stream]
 *
 * Prints one JSON line `{"port":N}` once it listens.
 */
const [dsn, mode] = Deno.args;
const { host, pathname } = new URL(dsn);
const upstream = `http://${host}/api${pathname}/envelope/`;

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, async (req) => {
  const reader = mode === "stream" ? req.body!.getReader() : undefined;
  const first = reader ? (await reader.read()).value! : new Uint8Array(await req.arrayBuffer());
  const end = first.indexOf(0x0a);
  const header = JSON.parse(new TextDecoder().decode(first.subarray(0, end < 0 ? undefined : end)));
  if (header.dsn !== dsn) return new Response("forbidden", { status: 403 });
  const res = await fetch(upstream, {
    method: "POST",
    body: reader ? replayThenRest(first, reader) : first,
    headers: { "content-type": "application/x-sentry-envelope" },
    duplex: "half",
  } as RequestInit);
  return new Response(res.body, { status: res.status });
});

// `first`, then each chunk the reader gives, read only when the ingest asks for more.
function replayThenRest(first: Uint8Array, reader: ReadableStreamDefaultReader<Uint8Array>) {
  let replay: Uint8Array | undefined = first;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const chunk = replay ?? (await reader.read()).value;
      replay = undefined;
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
  }, { highWaterMark: 0 });
}
