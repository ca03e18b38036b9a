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
import { nonceSplicer } from "./nonce_splice.ts";
import { requestIdFor } from "../../server/http/request_context.ts";

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

// The identical response for a request id: a fresh nonce in the page bytes and the CSP header.
function identicalAnswer(page: string, headers: Record<string, string>) {
  const splice = nonceSplicer(page, headers["content-security-policy"] ?? "");
  const random = new Uint8Array(16);
  return (requestId: string) => {
    const nonce = (crypto.getRandomValues(random) as Uint8Array & { toBase64(): string })
      .toBase64();
    const { body, csp } = splice(nonce);
    return new Response(body, {
      headers: { ...headers, "content-security-policy": csp, "x-request-id": requestId },
    });
  };
}

// No argument, so Deno builds no Request for it (its fastest path).
function identicalHandler(page: string, headers: Record<string, string>) {
  const answer = identicalAnswer(page, headers);
  return () => answer(crypto.randomUUID());
}

function floorHandler(page: string, headers: Record<string, string>) {
  const answer = identicalAnswer(page, headers);
  let seen = 0;
  return (req: Request) => {
    // Read as an app reads them to route (kept in a sum, so no read can be left out).
    seen += req.method.length + req.url.length + (req.headers.get("host")?.length ?? 0);
    // The app's own choice of id: the client's when it is sane, else a fresh one.
    return answer(requestIdFor(req));
  };
}
