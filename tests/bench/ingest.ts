/**
 * A light fake Sentry ingest for the benchmark: it reads each body to its end and answers
 * `200 {"id":"..."}`, and counts what arrived so the benchmark can check that large envelopes
 * were streamed through whole. Unlike tests/support/fake_ingest.ts it keeps no bodies and
 * hashes nothing, so its own cost stays small beside the tunnel's.
 *
 *   deno run --allow-net=127.0.0.1 tests/bench/ingest.ts
 *
 * Prints one JSON line `{"port":N}` once it listens. `GET /stats` answers the counts.
 */

/** What the ingest has received since it started. */
export interface IngestStats {
  /** Requests whose body was read to its end. */
  complete: number;
  /** Requests whose body broke off (the sender aborted). */
  broken: number;
  /** Complete bodies of at least 1 MiB... */
  large: number;
  /** ...and of those, how many came without a Content-Length (streamed, chunked). */
  largeStreamed: number;
  /** Every body byte read. */
  bytes: number;
}

const MiB = 1024 * 1024;
// Bodies up to this size are read in one op; larger ones are drained and dropped chunk by chunk
// so 64 concurrent 1 MiB uploads don't make the ingest itself the memory hog.
const WHOLE_BODY_BYTES = 64 * 1024;

const stats: IngestStats = { complete: 0, broken: 0, large: 0, largeStreamed: 0, bytes: 0 };
let nextId = 0;

async function bodyLength(req: Request): Promise<number> {
  if (req.body === null) return 0;
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (declared <= WHOLE_BODY_BYTES) return (await req.arrayBuffer()).byteLength;
  let length = 0;
  for await (const chunk of req.body) length += chunk.byteLength;
  return length;
}

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, async (req) => {
  if (req.method === "GET" && new URL(req.url).pathname === "/stats") {
    return Response.json(stats);
  }
  let length: number;
  try {
    length = await bodyLength(req);
  } catch {
    stats.broken++;
    return new Response(null, { status: 400 });
  }
  stats.complete++;
  stats.bytes += length;
  if (length >= MiB) {
    stats.large++;
    if (!req.headers.has("content-length")) stats.largeStreamed++;
  }
  const id = (nextId++).toString(16).padStart(32, "0");
  return new Response(`{"id":"${id}"}`, { headers: { "content-type": "application/json" } });
});
