/**
 * The tunnel's baseline: the least a Sentry tunnel on `Deno.serve` and `fetch` does. It reads
 * the body whole, checks the DSN in the envelope's first line, forwards the bytes and relays the
 * status. No cap, no timeout, no rate limit, no streaming, no compressed bodies: the gap from
 * it to the tunnel is what the tunnel's safety costs.
 *
 *   deno run --allow-net=127.0.0.1 tests/bench/forwarder.ts DSN
 *
 * Prints one JSON line `{"port":N}` once it listens.
 */
const dsn = Deno.args[0];
const { host, pathname } = new URL(dsn);
const upstream = `http://${host}/api${pathname}/envelope/`;

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, async (req) => {
  const body = new Uint8Array(await req.arrayBuffer());
  const end = body.indexOf(0x0a);
  const header = JSON.parse(new TextDecoder().decode(body.subarray(0, end < 0 ? undefined : end)));
  if (header.dsn !== dsn) return new Response("forbidden", { status: 403 });
  const res = await fetch(upstream, {
    method: "POST",
    body,
    headers: { "content-type": "application/x-sentry-envelope" },
  });
  return new Response(res.body, { status: res.status });
});
