/**
 * The tunnel's exchange with the ingest, on the platform's `fetch`: send one envelope, and turn
 * the ingest's answer into what the browser may see.
 */
import { contentLength } from "../http/content_length.ts";
import { GrowableBytes } from "./growable_bytes.ts";
import { type Rejection, type Relay, relayFor } from "./policy.ts";

type Bytes = Uint8Array<ArrayBuffer>;

/** Builds an answer: the request context's `send`, or a plain Response outside the app. */
export type Send = (
  body: Bytes | null,
  status: number,
  headers: Readonly<Record<string, string>>,
) => Response;

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

/** What the browser gets from the ingest's answer; see `relayFor`. */
export async function relayResponse(upstream: Response, send: Send): Promise<Response | Rejection> {
  if (upstream.type === "opaqueredirect" || isRedirect(upstream.status)) {
    await upstream.body?.cancel();
    return REDIRECTED;
  }
  const relay = relayFor(upstream.status, upstream.headers);
  if (!relay.passBody || isNullBody(upstream.status)) {
    await upstream.body?.cancel();
    return relayText(relay, send);
  }
  const body = await readSmallBody(upstream, MAX_UPSTREAM_RESPONSE_BYTES);
  if (body === undefined) return TOO_LARGE;
  return send(body, relay.status, relay.headers);
}

const REDIRECTED: Rejection = { status: 502, reason: "ingest answered with a redirect" };
const TOO_LARGE: Rejection = { status: 502, reason: "ingest response too large" };
const isRedirect = (status: number) => status >= 300 && status < 400;
const isNullBody = (status: number) => status === 204 || status === 205;

function relayText(relay: Relay, send: Send): Response {
  const body = isNullBody(relay.status) ? null : encoder.encode(relay.text);
  return send(body, relay.status, relay.headers);
}

/** Read a response body of at most `maxBytes`; undefined (and the rest cancelled) if larger. */
async function readSmallBody(response: Response, maxBytes: number): Promise<Bytes | undefined> {
  // A declared length bounds the body, unless fetch is decompressing it on the way in. Checked
  // before `response.body` is touched: that getter builds a stream arrayBuffer() must then drain.
  const declared = contentLength(response.headers);
  if (declared !== null && declared <= maxBytes && !response.headers.has("content-encoding")) {
    return new Uint8Array(await response.arrayBuffer());
  }
  if (response.body === null) return new Uint8Array();
  const reader = response.body.getReader();
  const read = new GrowableBytes();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return read.bytes();
    if (read.length + value.byteLength > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    read.append(value);
  }
}

const encoder = new TextEncoder();
