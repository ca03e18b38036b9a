/**
 * The benchmark's baseline: a bare `Deno.serve` that answers every request with one constant
 * HTML page (the app's own `GET /` body, read from a file), with the same headers as the app.
 * What the app does beyond this is what the benchmark's app/baseline ratio measures.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read=PAGE tests/bench/baseline.ts PAGE
 *
 * Prints one JSON line `{"port":N}` once it listens.
 */
const page = await Deno.readTextFile(Deno.args[0]);
const headers = { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" };

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, () => new Response(page, { headers }));
