/**
 * A tiny backend for the loader case: answers "ok" to every request, and counts those that came
 * with a trace (`sentry-trace` and `baggage`), so the benchmark can tell its traced fetches were.
 *
 *   deno run --allow-net=127.0.0.1 tests/bench/backend.ts
 *
 * Prints one JSON line `{"port":N}` once it listens. `GET /stats` answers the counts.
 */

/** What the backend has received since it started. */
export interface BackendStats {
  requests: number;
  traced: number;
}

const stats: BackendStats = { requests: 0, traced: 0 };

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, (req) => {
  if (new URL(req.url).pathname === "/stats") return Response.json(stats);
  stats.requests++;
  if (req.headers.has("sentry-trace") && req.headers.has("baggage")) stats.traced++;
  return new Response("ok");
});
