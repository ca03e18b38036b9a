/**
 * The benchmark's baselines: a bare `Deno.serve` that answers every request with one constant
 * HTML page (the app's own `GET /` body, read from a file).
 *
 * - plain: only `Content-Type` and `Cache-Control`; what serving these bytes costs at all.
 * - identical (a second argument, a JSON file of the app's response headers): the same headers
 *   as the app (CSP, security headers) and a fresh `X-Request-Id` per request, so the gap to
 *   the app is what the app adds, not what the platform costs for this response.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read=PAGE,HEADERS tests/bench/baseline.ts PAGE [HEADERS]
 *
 * Prints one JSON line `{"port":N}` once it listens.
 */
const page = await Deno.readTextFile(Deno.args[0]);
const fixed: Record<string, string> = Deno.args[1] === undefined
  ? { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" }
  : JSON.parse(await Deno.readTextFile(Deno.args[1]));
const identical = Deno.args[1] !== undefined;

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, () => {
  const res = new Response(page, { headers: fixed });
  if (identical) res.headers.set("x-request-id", crypto.randomUUID());
  return res;
});
