/** `POST /monitoring`, the Sentry tunnel (past ad blockers): the body is hostile until its header
 * names a configured DSN; it goes only to that DSN's URL, no redirect followed. Client and ingest
 * faults are 4xx/502/504 answers and a log; anything else is a bug, thrown for a 500 and report. */
import { type Dsn, findAllowedDsn, ingestUrl } from "../dsn.ts";
import { parseEnvelopeHeader, readHead } from "./envelope.ts";
import { clientKey, createRateLimiter } from "../rate_limit.ts";
import { clientAddress, type TrustProxy } from "../http/client_address.ts";
import { type BodyBudget, refusedBody } from "../http/body_budget.ts";
import {
  type Bytes,
  contentLength,
  FRAGMENTED_REASON,
  RequestBody,
  type StopCause,
} from "../http/request_body.ts";
import {
  contentEncoding,
  type Encoding,
  HEADER_MISSING,
  precheck,
  rateLimited,
  type Rejection,
  relayedHeaders,
  tooLarge,
  upstreamHeaders,
} from "./policy.ts";

// Taken before monitoring may wrap fetch for breadcrumbs: forwarded envelopes are not the app's.
const platformFetch = globalThis.fetch;

/** What the tunnel needs to know; the app builds it from its `Config`. */
export interface TunnelOptions {
  /** DSNs envelopes may be forwarded for; empty disables the tunnel (503). */
  readonly allowedDsns: readonly Dsn[];
  /** Largest request body, counted on the wire (compressed if the client compressed it). */
  readonly maxBodyBytes: number;
  /** Deadline for the ingest's answer once the body is read (the body's pace is the budget's). */
  readonly timeoutMs: number;
  /** Take the client address from X-Forwarded-For instead of the socket. */
  readonly trustProxy: TrustProxy;
  /** Envelopes per client address per minute; 0 or absent: no per-client limit (nor share). */
  readonly rateLimit?: number;
  /** Upstream fetch (tests, the dev inbox); the platform's honours HTTP(S)_PROXY and DENO_CERT. */
  readonly fetch?: typeof fetch;
  /** The server's budget for bodies in flight, shared with `ctx.json()`. */
  readonly bodies: BodyBudget;
  /** Receives one record per refused or failed envelope, with the request's id if known. */
  readonly log: (record: TunnelRecord, requestId: string | undefined) => void;
}

/** Why one envelope was not delivered; the app writes it to the request log. */
export interface TunnelRecord {
  readonly msg: "tunnel";
  /** The one-line reason the client was given. */
  readonly reason: string;
  readonly status: number;
  /** Body size: declared by Content-Length, else as far as it was read. */
  readonly bytes: number;
}

/** A request handler as `Deno.serve` calls it; the app also passes the request's id. */
export type TunnelHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
  ctx?: { readonly requestId?: string; refused?: { reason: string; bytes?: number } },
) => Promise<Response>;

/** Bodies up to this size with a Content-Length are read whole and sent with a Content-Length;
 * larger or chunked ones stream. */
export const SMALL_BODY_BYTES = 64 * 1024;

// The ingest answers `{"id":"..."}`; anything bigger is not a Sentry ingest.
const MAX_ANSWER_BYTES = 64 * 1024;
const TEXT = "text/plain; charset=utf-8";

/** Build the tunnel handler. */
export function createTunnelHandler(options: TunnelOptions): TunnelHandler {
  const { allowedDsns, maxBodyBytes, timeoutMs, bodies } = options;
  const upstreamFetch = options.fetch ?? platformFetch;
  const envelopeUrls = new Map(allowedDsns.map((dsn) => [dsn, ingestUrl(dsn, "envelope")]));
  const limiter = options.rateLimit ? createRateLimiter({ limit: options.rateLimit }) : undefined;
  const limits = { enabled: allowedDsns.length > 0, maxBodyBytes };

  /** Read the header line, check the DSN, send the body upstream and relay the answer. */
  async function forward(
    body: RequestBody,
    encoding: Encoding | null,
    headers: Record<string, string>,
  ): Promise<Response | Rejection> {
    const head = await readHead(() => body.next(), encoding);
    if (!("line" in head)) return head;
    const named = parseEnvelopeHeader(head.line);
    if (typeof named === "string") return { status: 400, reason: named };
    const dsn = findAllowedDsn(named, allowedDsns);
    if (dsn === undefined) return { status: 403, reason: "envelope DSN is not allowed here" };
    // A chunked body that ends small is sent whole too: with a Content-Length, and replayable.
    const { raw } = head;
    while (!body.done && body.declared === null && raw.length <= SMALL_BODY_BYTES) {
      const chunk = await body.next();
      if (chunk !== undefined) raw.append(chunk);
    }
    const sent = body.done ? raw.bytes() : body.stream(raw.bytes());
    try {
      const url = envelopeUrls.get(dsn)!;
      return await relay(await post(upstreamFetch, url, sent, headers, body.upstream.signal));
    } catch (error) {
      // Cut short by the tunnel (timeout, client gone, too large): the caller answers.
      if (body.cause !== undefined && body.cause !== "abandoned") throw error;
      if (error instanceof TypeError) return { status: 502, reason: "ingest unreachable" };
      throw error;
    }
  }

  return async function tunnelEnvelope(req, info, ctx) {
    const log = (status: number, reason: string, bytes: number) => {
      // The app counts it per client and reason (server/http/refusal_log.ts).
      if (ctx) ctx.refused = { reason, bytes };
      options.log({ msg: "tunnel", reason, status, bytes }, ctx?.requestId);
    };
    const refuse = ({ status, reason, headers }: Rejection, bytes: number) => {
      log(status, reason, bytes);
      return new Response(`${reason}\n`, { status, headers: { ...headers, "content-type": TEXT } });
    };
    const declared = contentLength(req.headers);
    const encoding = contentEncoding(req.headers.get("content-encoding"));
    const clientIp = clientAddress(req, info, options.trustProxy);
    const client = clientKey(clientIp); // the rate limit's and the budget's key
    let early = precheck(limits, declared, encoding);
    if (early === undefined && limiter !== undefined && clientIp !== "") {
      const decision = limiter.take(client, performance.now());
      if (!decision.allowed) early = rateLimited(decision.retryAfterSeconds);
    }
    // `req.body` is not touched for a small body with a length: it would build a stream.
    const empty = declared === 0 || (declared === null && req.body === null);
    if (early !== undefined || encoding === "unsupported" || empty) {
      req.body?.cancel().catch(() => {}); // refused unread, however large
      return refuse(early ?? HEADER_MISSING, declared ?? 0);
    }
    const body = new RequestBody(req, declared, maxBodyBytes, SMALL_BODY_BYTES, bodies, client);
    // One timer per envelope, cleared when it ends: AbortSignal.timeout's would outlive it.
    let deadline: ReturnType<typeof setTimeout> | undefined;
    body.onEnd = () => deadline = setTimeout(() => body.stop("timeout"), timeoutMs);
    try {
      const outcome = await forward(body, encoding, upstreamHeaders(req.headers, clientIp));
      const bytes = declared ?? body.received;
      if (!(outcome instanceof Response)) return refuse(outcome, bytes);
      const { ok, status } = outcome;
      if (!ok) log(status, "ingest refused the envelope", bytes);
      return outcome;
    } catch (error) {
      if (body.cause === undefined || body.cause === "abandoned") throw error;
      return refuse(stopped(body.cause, body.done), declared ?? body.received);
    } finally {
      clearTimeout(deadline);
      body.release();
    }
  };

  /** The answer to a transfer the tunnel cut short. */
  function stopped(cause: StopCause, allRead: boolean): Rejection {
    if (cause === "too-large") return tooLarge(maxBodyBytes);
    if (cause === "fragmented") return { status: 400, reason: FRAGMENTED_REASON };
    // Once every byte was read, the wait is the ingest's (504); before, the client's (408).
    if (cause === "timeout" && allRead) {
      return { status: 504, reason: `ingest did not answer within ${timeoutMs} ms` };
    }
    // Else nobody reads the answer to a client gone; the status labels the log line.
    return refusedBody(cause, bodies.limits) ??
      { status: 400, reason: "client closed the connection before the body was complete" };
  }
}

/** POST an envelope, no redirects; a body held whole is sent again if fetch failed before any
 * answer (a TypeError, not `signal`): fetch itself retries only reused connections. */
async function post(
  upstreamFetch: typeof fetch,
  url: string,
  body: Bytes | ReadableStream<Bytes>,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<Response> {
  const init = { method: "POST", headers, body, redirect: "manual", signal, duplex: "half" };
  const send = () => upstreamFetch(url, init as RequestInit);
  return await send().catch((error) => {
    if (!(body instanceof Uint8Array) || !(error instanceof TypeError) || signal.aborted) {
      throw error;
    }
    return send();
  });
}

/** What the browser gets of the ingest's answer (see `relayedHeaders`), or a 502. */
async function relay(upstream: Response): Promise<Response | Rejection> {
  const { status } = upstream;
  const { json, headers } = relayedHeaders(upstream.headers);
  const empty = status === 204 || status === 205;
  const redirected = (status >= 300 && status < 400) || upstream.type === "opaqueredirect";
  // fetch passes on any three-digit status; a Response carries 200-599 only.
  const invalid = status < 200 || status > 599;
  if (redirected || invalid || !json || empty) {
    await upstream.body?.cancel();
    if (redirected) return { status: 502, reason: "ingest answered with a redirect" };
    if (invalid) return { status: 502, reason: "ingest answered an invalid status" };
    return new Response(empty ? null : `ingest answered ${status}\n`, { status, headers });
  }
  // A declared length bounds the body, unless fetch decompresses it on the way in.
  const declared = contentLength(upstream.headers);
  if (
    declared !== null && declared <= MAX_ANSWER_BYTES && !upstream.headers.has("content-encoding")
  ) {
    return new Response(await upstream.bytes(), { status, headers });
  }
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let length = 0;
  for await (const chunk of upstream.body ?? []) {
    length += chunk.byteLength;
    // Leaving the loop cancels the rest.
    if (length > MAX_ANSWER_BYTES) return { status: 502, reason: "ingest response too large" };
    chunks.push(chunk);
  }
  return new Response(new Blob(chunks), { status, headers });
}
