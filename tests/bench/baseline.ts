/**
 * The benchmark's baselines: a bare `Deno.serve` that answers every request with the app's own
 * `GET /` page (read from a file).
 *
 * - plain: the page as it is, with only `Content-Type` and `Cache-Control`; what serving these
 *   bytes costs at all.
 * - identical (a second argument, a JSON file of the app's response headers): the same headers
 *   as the app and the per-request work the response itself needs, done the cheapest way known:
 *   a fresh CSP nonce (16 random bytes, base64) written into the pre-encoded page bytes and into
 *   the CSP header, and a fresh `X-Request-Id`. So the gap to the app is what the app adds
 *   (routing, limits, request log, monitoring), not what this response costs on the platform.
 * - floor (a third argument, `floor`): the identical response, plus the least any app does with
 *   the request before it can answer: Deno builds the `Request` (a handler that takes no
 *   argument skips it), and the handler reads the method, the URL and the Host and
 *   X-Request-Id headers, the last echoed when the client sent one, as the app does, through
 *   the public Request API (`req.headers`), as any app must. No checks, routing or log: the gap
 *   from the identical baseline to this one is what no app can avoid, the gap from this one to
 *   the app is what the app chooses to do.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read=PAGE,HEADERS tests/bench/baseline.ts PAGE \
 *     [HEADERS [floor]]
 *
 * Prints one JSON line `{"port":N}` once it listens.
 */
import { floorAnswer, identicalAnswer } from "./page_answers.ts";

const page = await Deno.readTextFile(Deno.args[0]);
const fixed: Record<string, string> = Deno.args[1] === undefined
  ? { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" }
  : JSON.parse(await Deno.readTextFile(Deno.args[1]));

const handler = Deno.args[1] === undefined
  ? () => new Response(page, { headers: fixed })
  : Deno.args[2] === "floor"
  ? floorHandler(page, fixed)
  : identicalHandler(page, fixed);

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, handler);

// No argument, so Deno builds no Request for it (its fastest path).
function identicalHandler(page: string, headers: Record<string, string>) {
  const answer = identicalAnswer(page, headers);
  return () => answer(crypto.randomUUID());
}

function floorHandler(page: string, headers: Record<string, string>) {
  const answer = floorAnswer(page, headers);
  return (req: Request) => answer(req);
}
