/**
 * `POST /monitoring`: the Sentry tunnel. The browser SDK posts envelopes here (so ad blockers
 * don't drop them) and the server forwards the raw bytes to the ingest of an allowed DSN.
 *
 * This is a security boundary: the body is hostile until its header line names a configured
 * DSN, the upstream URL is built from that configured DSN (never from the client's string), and
 * only a few upstream response headers come back to the app's origin.
 *
 * Failures a client or the ingest can cause are answers (4xx, 502, 504) with a log record;
 * anything else is a bug and is thrown, for the app to answer 500 and report it.
 */
import { type Dsn, findAllowedDsn, ingestUrl } from "./dsn.ts";
import { findHeaderEnd, MAX_HEADER_BYTES, parseEnvelopeHeader } from "./envelope.ts";
import { clientKey, createRateLimiter, type RateLimiter } from "./rate_limit.ts";
import { BodyStopped, isSmallBody, ReadBytes, RequestBody, SMALL_BODY_BYTES } from "./body.ts";
import { createStreamSlots } from "./stream_slots.ts";
import { createHeaderLineDecoder, type HeadFormat } from "./header_decode.ts";
import type { TunnelRecord } from "./log.ts";
import {
  clientAddress,
  contentLength,
  decoderFormat,
  HEADER_MISSING,
  NOT_DECODABLE,
  precheck,
  rateLimited,
  type Rejection,
  stoppedRejection,
  upstreamHeaders,
} from "./policy.ts";
import { answer, postEnvelope, relayResponse } from "./upstream.ts";

// Taken when this module is evaluated, before monitoring may wrap `globalThis.fetch` to record
// breadcrumbs: envelopes the tunnel forwards are not the app's own requests.
const platformFetch = globalThis.fetch;

/** What the tunnel needs to know; the app builds it from its `Config`. */
export interface TunnelOptions {
  /** DSNs envelopes may be forwarded for; empty disables the tunnel (503). */
  readonly allowedDsns: readonly Dsn[];
  /** Largest request body, counted on the wire (compressed if the client compressed it). */
  readonly maxBodyBytes: number;
  /** Deadline for the whole exchange: reading the body and the ingest's answer. */
  readonly timeoutMs: number;
  /** Take the client address from X-Forwarded-For instead of the socket. */
  readonly trustProxy: boolean;
  /** Envelopes per client address per minute; 0 or absent: no limit. */
  readonly rateLimit?: number;
  /** Upstream fetch; tests and the dev inbox pass their own. By default the platform's fetch
   * as it was when this module loaded (it honours HTTP(S)_PROXY, NO_PROXY and DENO_CERT). */
  readonly fetch?: typeof fetch;
  /** Large bodies (over 64 KiB, or chunked) streamed at once; the rest wait, unread. */
  readonly maxLargeBodies?: number;
  /** Receives one record per refused or failed envelope, with the request's id if known. */
  readonly log: (record: TunnelRecord, requestId: string | undefined) => void;
}

/** A request handler as `Deno.serve` calls it; the app also passes the request's id. */
export type TunnelHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
  ctx?: { readonly requestId?: string },
) => Promise<Response>;

// A compressed header line of 64 KiB is at most a little over 64 KiB on the wire; this bound
// stops bodies of empty deflate blocks that never produce a line.
const MAX_ENCODED_HEADER_BYTES = 256 * 1024;

// Each large body in flight holds a few MB (read buffers, the upstream request, their garbage
// until V8 collects it); 8 keep one core busy with 1 MiB uploads, and 200 uploads at once
// within 250 MB.
/** Large bodies streamed at once by default. */
export const DEFAULT_LARGE_BODIES = 8;

/** The envelope header line, and every body byte read to find it. */
interface Head {
  readonly line: Uint8Array;
  readonly read: ReadBytes;
}

/**
 * Build the tunnel handler.
 *
 * @example
 * const tunnel = createTunnelHandler({
 *   allowedDsns: config.tunnelAllowedDsns,
 *   maxBodyBytes: config.tunnelMaxBodyBytes,
 *   timeoutMs: config.tunnelTimeoutMs,
 *   trustProxy: config.trustProxy,
 *   log: (record) => console.error(JSON.stringify(record)),
 * });
 * Deno.serve((req, info) => tunnel(req, info));
 */
export function createTunnelHandler(options: TunnelOptions): TunnelHandler {
  const upstreamFetch = options.fetch ?? platformFetch;
  // Built once: every envelope for a DSN goes to the same URL.
  const envelopeUrls = new Map(options.allowedDsns.map((dsn) => [dsn, ingestUrl(dsn, "envelope")]));
  const takeSlot = createStreamSlots(options.maxLargeBodies ?? DEFAULT_LARGE_BODIES);
  const limiter: RateLimiter | undefined = options.rateLimit
    ? createRateLimiter({ limit: options.rateLimit })
    : undefined;
  const limits = {
    enabled: options.allowedDsns.length > 0,
    maxBodyBytes: options.maxBodyBytes,
    timeoutMs: options.timeoutMs,
  };

  function reject(requestId: string | undefined, rejection: Rejection, bytes: number) {
    const { status, reason } = rejection;
    options.log({ msg: "tunnel", reason, status, bytes }, requestId);
    const headers = { ...rejection.headers, "content-type": "text/plain; charset=utf-8" };
    return answer(encoder.encode(`${reason}\n`), status, headers);
  }

  /** Read the header line, check the DSN, send the body upstream and relay the answer. */
  async function forward(
    body: RequestBody,
    format: HeadFormat | null,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response | Rejection> {
    const head = format === null ? await readPlainHead(body) : await readEncodedHead(body, format);
    if ("status" in head) return head;
    const header = parseEnvelopeHeader(head.line);
    if (!header.ok) return { status: 400, reason: header.reason };
    const dsn = findAllowedDsn(header.dsn, options.allowedDsns);
    if (dsn === undefined) return { status: 403, reason: "envelope DSN is not allowed here" };
    const url = envelopeUrls.get(dsn)!;
    // A chunked body that ends within the small-body size is sent whole too: with a
    // Content-Length, and replayable if the first connection fails.
    const read = head.read;
    while (!body.done && body.declared === null && read.length <= SMALL_BODY_BYTES) {
      const chunk = await body.next();
      if (chunk !== undefined) read.append(chunk);
    }
    const sent = body.done ? read.bytes() : body.stream(read.bytes());
    try {
      return await relayResponse(await postEnvelope(upstreamFetch, url, sent, headers, signal));
    } catch (error) {
      // Stopped by the tunnel itself (timeout, client gone, body too large): the caller answers.
      if (body.cause !== undefined && body.cause !== "abandoned") throw new BodyStopped();
      if (error instanceof TypeError) return { status: 502, reason: "ingest unreachable" };
      throw error;
    }
  }

  return async function tunnelEnvelope(req, info, ctx) {
    const requestId = ctx?.requestId;
    const headers = req.headers;
    const declared = contentLength(headers);
    const format = decoderFormat(headers.get("content-encoding"));
    const clientIp = clientAddress(headers, info.remoteAddr, options.trustProxy);
    const early = precheck(limits, declared, format) ??
      overLimit(limiter, clientIp, performance.now());
    const empty = declared === 0 || (declared === null && req.body === null);
    if (early !== undefined || format === "unsupported" || empty) {
      // Not reading the body at all is the point (an oversized upload is refused unread).
      req.body?.cancel().catch(ignore);
      return reject(requestId, early ?? HEADER_MISSING, declared ?? 0);
    }
    // Cutting the body short (timeout, cap, client gone) also stops the upstream request.
    const upstream = new AbortController();
    const body = new RequestBody(req, declared, options.maxBodyBytes, () => upstream.abort());
    // One timer per envelope, cleared when it ends: AbortSignal.timeout's timer would outlive
    // the exchange until it fires, 30 s of them under load.
    const deadline = setTimeout(() => body.stop("timeout"), options.timeoutMs);
    const slot = isSmallBody(declared) ? undefined : takeSlot();
    try {
      // Waiting for a slot counts against the deadline: a 408 if it never comes.
      if (slot !== undefined) await body.until(slot.ready);
      const sent = upstreamHeaders(headers, clientIp);
      const outcome = await forward(body, format, sent, upstream.signal);
      const bytes = declared ?? body.received;
      if (!(outcome instanceof Response)) return reject(requestId, outcome, bytes);
      if (!outcome.ok) {
        const record = { msg: "tunnel", reason: "ingest refused the envelope", bytes } as const;
        options.log({ ...record, status: outcome.status }, requestId);
      }
      return outcome;
    } catch (error) {
      if (!(error instanceof BodyStopped)) throw error;
      // Once every byte was read, a timeout is the ingest's (504), before it the client's (408).
      const rejection = stoppedRejection(body.cause, body.done, limits);
      return reject(requestId, rejection, declared ?? body.received);
    } finally {
      clearTimeout(deadline);
      slot?.release();
      // A read still pending (the ingest answered before taking the whole body) now fails, so a
      // truncated chunked body is never ended cleanly upstream.
      body.release();
    }
  };
}

/** The 429 for a client over its budget, if there is a limit. */
function overLimit(
  limiter: RateLimiter | undefined,
  clientIp: string | undefined,
  nowMs: number,
): Rejection | undefined {
  if (limiter === undefined || clientIp === undefined) return undefined;
  const decision = limiter.take(clientKey(clientIp), nowMs);
  return decision.allowed ? undefined : rateLimited(decision.retryAfterSeconds);
}

/** Read until the envelope header line is complete, scanning each chunk once as it comes. */
async function readPlainHead(body: RequestBody): Promise<Head | Rejection> {
  const read = new ReadBytes();
  for (;;) {
    const seen = read.length;
    const chunk = await body.next();
    if (chunk === undefined) return HEADER_MISSING;
    read.append(chunk);
    const end = findHeaderEnd(chunk, seen);
    if (end.kind === "found") {
      return { line: read.bytes().subarray(0, end.offset), read };
    }
    if (end.kind === "too-long") return HEADER_MISSING;
  }
}

/**
 * Decompress only as much of the body as it takes to see the header line; the raw bytes are
 * kept so the original compressed body is what gets forwarded.
 */
async function readEncodedHead(body: RequestBody, format: HeadFormat): Promise<Head | Rejection> {
  const read = new ReadBytes();
  const decoder = await createHeaderLineDecoder(format, MAX_HEADER_BYTES);
  try {
    for (;;) {
      const seen = read.length;
      const chunk = await body.next();
      if (chunk !== undefined) read.append(chunk);
      const room = MAX_ENCODED_HEADER_BYTES - seen;
      let outcome = chunk !== undefined && room > 0
        ? await decoder.push(chunk.subarray(0, room))
        : undefined;
      // The body ended, or no line within the encoded cap: what was decoded decides.
      if (
        outcome === undefined ||
        (outcome.kind === "more" && read.length >= MAX_ENCODED_HEADER_BYTES)
      ) {
        outcome = await decoder.end();
      }
      if (outcome.kind === "line") return { line: outcome.line, read };
      if (outcome.kind === "corrupt") return NOT_DECODABLE;
      if (outcome.kind === "missing") return HEADER_MISSING;
    }
  } finally {
    decoder.dispose();
  }
}

const encoder = new TextEncoder();

function ignore(): void {}
