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
import { GrowableBytes } from "./growable_bytes.ts";
import { BodySlots } from "./body_slots.ts";
import { clientKey, createRateLimiter, type RateLimiter } from "./rate_limit.ts";
import {
  collectSmallBody,
  hasBody,
  isBorrowed,
  isLargeBody,
  readChunk,
  releaseBody,
  startTransfer,
  stopTransfer,
  type Transfer,
  TransferStopped,
} from "./body.ts";
import { createHeaderLineDecoder, type HeadFormat, type LineOutcome } from "./header_decode.ts";
import type { TunnelRecord } from "./log.ts";
import {
  clientAddress,
  decoderFormat,
  HEADER_MISSING,
  NOT_DECODABLE,
  precheck,
  rateLimited,
  type Rejection,
  stoppedRejection,
  upstreamHeaders,
} from "./policy.ts";
import { postEnvelope, relayResponse, type Send } from "./upstream.ts";
import { contentLength } from "../http/content_length.ts";
import { requestHeaders } from "../http/request_headers.ts";
import type { RequestContext } from "../http/request_context.ts";

// Taken when this module is evaluated, before monitoring may wrap `globalThis.fetch` to record
// breadcrumbs: envelopes the tunnel forwards are not the app's own requests.
const platformFetch = globalThis.fetch;

/** What the tunnel needs to know; the router builds it from the app's `Config`. */
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
  /** Large bodies (over 64 KiB, or chunked) read and forwarded at once; the rest wait. */
  readonly maxLargeBodies?: number;
  /** Receives one record per refused or failed envelope (the app's batched request log). */
  readonly log: (record: TunnelRecord, requestId: string | undefined) => void;
}

/**
 * A request handler as `Deno.serve` calls it. Inside the app it also gets the request's
 * context, which builds its answers complete (security headers and request id included).
 */
export type TunnelHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
  ctx?: Pick<RequestContext, "send" | "requestId">,
) => Promise<Response>;

const plainSend: Send = (body, status, headers) => new Response(body, { status, headers });

type Bytes = Uint8Array<ArrayBuffer>;

// A compressed header line of 64 KiB is at most a little over 64 KiB on the wire; this bound
// stops bodies of empty deflate blocks that never produce a line.
const MAX_ENCODED_HEADER_BYTES = 256 * 1024;

// Each large body in flight holds a few MB (read buffers, the upstream request, their garbage
// until V8 collects it); 8 keep one core busy with 1 MiB uploads.
/** Large bodies read at once by default; the rest wait their turn, unread. */
export const DEFAULT_LARGE_BODIES = 8;

const MORE: LineOutcome = { kind: "more" };

/** The envelope header line was read; `read` holds every body byte read so far. */
interface Head {
  readonly line: Bytes;
  readonly read: GrowableBytes;
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
 *   rateLimit: config.tunnelRateLimit,
 * });
 * Deno.serve((req, info) => tunnel(req, info));
 */
export function createTunnelHandler(options: TunnelOptions): TunnelHandler {
  const upstreamFetch = options.fetch ?? platformFetch;
  // Built once: every envelope for a DSN goes to the same URL.
  const envelopeUrls = new Map(options.allowedDsns.map((dsn) => [dsn, ingestUrl(dsn, "envelope")]));
  const slots = new BodySlots(options.maxLargeBodies ?? DEFAULT_LARGE_BODIES);
  const log = options.log;
  const limiter: RateLimiter | undefined = options.rateLimit
    ? createRateLimiter({ limit: options.rateLimit })
    : undefined;
  const limits = {
    enabled: options.allowedDsns.length > 0,
    maxBodyBytes: options.maxBodyBytes,
    timeoutMs: options.timeoutMs,
  };

  function reject(id: string | undefined, rejection: Rejection, bytes: number, send: Send) {
    log({ msg: "tunnel", reason: rejection.reason, status: rejection.status, bytes }, id);
    return textResponse(rejection, send);
  }

  async function forward(
    headers: Record<string, string>,
    t: Transfer,
    format: HeadFormat | null,
    send: Send,
  ): Promise<Response | Rejection> {
    const head = format === null ? await readPlainHead(t) : await readEncodedHead(t, format);
    if ("status" in head) return head;
    const header = parseEnvelopeHeader(head.line);
    if (!header.ok) return { status: 400, reason: header.reason };
    const dsn = findAllowedDsn(header.dsn, options.allowedDsns);
    if (dsn === undefined) return { status: 403, reason: "envelope DSN is not allowed here" };
    const body = await collectSmallBody(t, head.read);
    t.forwarding = true;
    const url = envelopeUrls.get(dsn)!;
    let upstream: Response;
    try {
      upstream = await postEnvelope(upstreamFetch, url, body, headers, t.upstream.signal);
    } catch (error) {
      return upstreamFailure(t, error);
    }
    const outcome = await relayResponse(upstream, send).catch((error) => upstreamFailure(t, error));
    t.answered = true;
    return outcome;
  }

  return async function tunnelEnvelope(req, info, ctx) {
    const send: Send = ctx ? (body, status, headers) => ctx.send(body, status, headers) : plainSend;
    // Read from Deno's request record, not req.headers (see server/http/request_headers.ts).
    const headers = requestHeaders(req);
    const declaredBytes = contentLength(headers);
    const format = decoderFormat(headers.get("content-encoding"));
    const clientIp = clientAddress(headers, info.remoteAddr, options.trustProxy);
    const early = precheck(limits, declaredBytes, format) ??
      overLimit(limiter, clientIp, performance.now());
    if (early !== undefined || format === "unsupported" || !hasBody(req, declaredBytes)) {
      // Not reading the body at all is the point (an oversized upload is refused unread).
      req.body?.cancel().catch(ignore);
      return reject(ctx?.requestId, early ?? HEADER_MISSING, declaredBytes ?? 0, send);
    }
    const upstream = upstreamHeaders(headers, clientIp);
    const t = startTransfer(req, declaredBytes, options.maxBodyBytes);
    // One timer per envelope, cleared when it ends. Not AbortSignal.timeout: its timer (about
    // 1 KB) outlives the exchange until it fires, 30 s of them under load.
    const deadline = setTimeout(stopTransfer, options.timeoutMs, t, "timeout");
    let slot = false;
    try {
      if (isLargeBody(declaredBytes)) {
        // Its body stays unread, in the kernel's socket buffers, until a slot is free.
        await slots.take(t);
        slot = true;
      }
      const outcome = await forward(upstream, t, format, send);
      const bytes = t.declaredBytes ?? t.received;
      if (!(outcome instanceof Response)) return reject(ctx?.requestId, outcome, bytes, send);
      if (!outcome.ok) {
        log(
          { msg: "tunnel", reason: "ingest refused the envelope", status: outcome.status, bytes },
          ctx?.requestId,
        );
      }
      return outcome;
    } catch (error) {
      if (!(error instanceof TransferStopped)) throw error;
      const rejection = stoppedRejection(t.cause, t.forwarding && t.done, limits);
      return reject(ctx?.requestId, rejection, t.declaredBytes ?? t.received, send);
    } finally {
      clearTimeout(deadline);
      if (slot) slots.release();
      // The exchange is over. A read still pending (the ingest answered before taking the
      // whole body) must not end cleanly, or a truncated chunked body would be closed upstream
      // as if complete.
      if (!t.done) t.cause ??= "abandoned";
      // An upstream request still open is no longer wanted. Aborting only then matters: every
      // abort builds a DOMException with a stack trace, too dear for each success.
      if (t.forwarding && !t.answered) t.upstream.abort();
      t.wake?.(new TransferStopped());
      releaseBody(t);
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

/**
 * A failed upstream fetch: stopped by the tunnel itself (timeout, client gone, body too large),
 * a network error (fetch rejects with TypeError), or a bug, which is rethrown. A body stream
 * the upstream side gave up on ("abandoned") is the ingest's failure, not the client's.
 */
function upstreamFailure(t: Transfer, error: unknown): Rejection {
  if (t.cause !== undefined && t.cause !== "abandoned") throw new TransferStopped();
  if (error instanceof TypeError) return { status: 502, reason: "ingest unreachable" };
  throw error;
}

/** Read until the envelope header line is complete, scanning each chunk once as it comes. */
async function readPlainHead(t: Transfer): Promise<Head | Rejection> {
  const read = new GrowableBytes();
  for (;;) {
    const seen = t.received;
    const chunk = await readChunk(t, true);
    if (chunk === undefined) return HEADER_MISSING;
    read.append(chunk, isBorrowed(t, chunk));
    const end = findHeaderEnd(chunk, seen);
    if (end.kind === "found") return { line: read.bytes().subarray(0, end.offset), read };
    if (end.kind === "too-long") return HEADER_MISSING;
  }
}

/**
 * Decompress only as much of the body as it takes to see the header line; the raw bytes are
 * kept so the original compressed body is what gets forwarded.
 */
async function readEncodedHead(t: Transfer, format: HeadFormat): Promise<Head | Rejection> {
  const read = new GrowableBytes();
  const decoder = await createHeaderLineDecoder(format, MAX_HEADER_BYTES);
  try {
    for (;;) {
      const seen = t.received;
      const chunk = await readChunk(t, true);
      if (chunk !== undefined) read.append(chunk, isBorrowed(t, chunk));
      const room = MAX_ENCODED_HEADER_BYTES - seen;
      let outcome: LineOutcome = chunk !== undefined && room > 0
        ? await decoder.push(chunk.subarray(0, room))
        : MORE;
      // The body ended, or no line within the encoded cap: what was decoded decides.
      if (
        outcome.kind === "more" && (chunk === undefined || t.received >= MAX_ENCODED_HEADER_BYTES)
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

function textResponse({ status, reason, headers }: Rejection, send: Send): Response {
  return send(encoder.encode(`${reason}\n`), status, {
    ...headers,
    "content-type": "text/plain; charset=utf-8",
  });
}

const encoder = new TextEncoder();

function ignore(): void {}
