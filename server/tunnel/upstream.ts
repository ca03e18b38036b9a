/**
 * The tunnel's exchange with the ingest, on the platform's `fetch`: send one envelope, and turn
 * the ingest's answer into what the browser may see.
 */
import type { Bytes } from "./body.ts";
import { contentLength, type Rejection, relayFor } from "./policy.ts";

// The ingest answers `{"id":"..."}`; anything bigger is not a Sentry ingest.
const MAX_UPSTREAM_RESPONSE_BYTES = 64 * 1024;

/**
 * POST an envelope to the ingest, never following a redirect. A body held whole is sent once
 * more when fetch failed without an answer (a network error, a TypeError) and `signal` was not
 * the cause: the connection was refused, or reset before the answer began (an ingest restarting,
 * a proxy in front of it failing). Fetch itself resends a request that a reused keep-alive
 * connection lost as the ingest closed it; this covers the fresh connections it does not. A
 * stream cannot be replayed, and once fetch returned an answer nothing is sent again.
 *
 * @example
 * const res = await postEnvelope(fetch, url, body, headers, AbortSignal.timeout(30_000));
 */
export async function postEnvelope(
  upstreamFetch: typeof fetch,
  url: string,
  body: Bytes | ReadableStream<Bytes>,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  const init = { method: "POST", headers, body, redirect: "manual", signal, duplex: "half" };
  try {
    return await upstreamFetch(url, init as RequestInit);
  } catch (error) {
    if (!(body instanceof Uint8Array) || !(error instanceof TypeError) || signal.aborted) {
      throw error;
    }
    return await upstreamFetch(url, init as RequestInit);
  }
}

/** What the browser gets from the ingest's answer (see `relayFor`), or a 502. */
export async function relayResponse(upstream: Response): Promise<Response | Rejection> {
  if (upstream.type === "opaqueredirect" || isRedirect(upstream.status)) {
    await upstream.body?.cancel();
    return REDIRECTED;
  }
  const { status, headers, passBody, text } = relayFor(upstream.status, upstream.headers);
  if (isNullBody(status)) {
    await upstream.body?.cancel();
    return new Response(null, { status, headers });
  }
  if (!passBody) {
    await upstream.body?.cancel();
    return answer(encoder.encode(text), status, headers);
  }
  const body = await readSmallBody(upstream, MAX_UPSTREAM_RESPONSE_BYTES);
  return body === undefined ? TOO_LARGE : answer(body, status, headers);
}

/** A response with a byte body. */
export function answer(
  body: Bytes,
  status: number,
  headers: Readonly<Record<string, string>>,
): Response {
  return new Response(body, { status, headers });
}

const REDIRECTED: Rejection = { status: 502, reason: "ingest answered with a redirect" };
const TOO_LARGE: Rejection = { status: 502, reason: "ingest response too large" };
const isRedirect = (status: number) => status >= 300 && status < 400;
const isNullBody = (status: number) => status === 204 || status === 205;

/** Read a response body of at most `maxBytes`; undefined (and the rest cancelled) if larger. */
async function readSmallBody(response: Response, maxBytes: number): Promise<Bytes | undefined> {
  // A declared length bounds the body, unless fetch is decompressing it on the way in.
  const declared = contentLength(response.headers);
  if (declared !== null && declared <= maxBytes && !response.headers.has("content-encoding")) {
    return await response.bytes();
  }
  const chunks: Bytes[] = [];
  let length = 0;
  for await (const chunk of response.body ?? []) {
    length += chunk.byteLength;
    // Leaving the loop cancels the rest of the body.
    if (length > maxBytes) return undefined;
    chunks.push(chunk as Bytes);
  }
  return await new Blob(chunks).bytes();
}

const encoder = new TextEncoder();
