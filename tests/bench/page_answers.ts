/**
 * The baselines' answers to `GET /`: the app's own page and headers, each request's parts (nonce,
 * request id, trace tags) made the cheapest way known, so a gap to the app is what the app adds.
 * Used by baseline.ts and sdk_reference.ts.
 */
import { nonceSplicer } from "./nonce_splice.ts";
import { requestIdFor } from "../../server/http/request_context.ts";

/**
 * The identical response for a request id: a fresh nonce (16 random bytes, base64) in the page
 * bytes and the CSP header, and `slotText` where the page was cut at `slot` (its trace tags).
 */
export function identicalAnswer(page: string, headers: Record<string, string>, slot?: string) {
  const splice = nonceSplicer(page, headers["content-security-policy"] ?? "", slot);
  const random = new Uint8Array(16);
  return (requestId: string, slotText?: string) => {
    const nonce = (crypto.getRandomValues(random) as Uint8Array & { toBase64(): string })
      .toBase64();
    const { body, csp } = splice(nonce, slotText);
    return new Response(body, {
      headers: { ...headers, "content-security-policy": csp, "x-request-id": requestId },
    });
  };
}

/**
 * The floor: the identical response after the least any app does with the request: method, URL,
 * Host and X-Request-Id read through the public Request API, the client's id echoed when sane.
 */
export function floorAnswer(page: string, headers: Record<string, string>, slot?: string) {
  const answer = identicalAnswer(page, headers, slot);
  let seen = 0;
  return (req: Request, slotText?: string) => {
    // Read as an app reads them to route (kept in a sum, so no read can be left out).
    seen += req.method.length + req.url.length + (req.headers.get("host")?.length ?? 0);
    // The app's own choice of id: the client's when it is sane, else a fresh one.
    return answer(requestIdFor(req), slotText);
  };
}
