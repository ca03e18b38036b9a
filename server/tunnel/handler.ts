/** `POST /monitoring`, the Sentry tunnel (past ad blockers): the body is hostile until its header
 * names a configured DSN; then it is read whole and queued for that DSN's URL only, answered 200
 * as Sentry would. Client faults, rate limits and a full queue are 4xx/503 answers the app counts;
 * anything else is a bug, thrown for a 500 and report. */
import { type Dsn, findAllowedDsn, ingestUrl } from "../dsn.ts";
import { itemTypes, parseEnvelopeHeader, readHead } from "./envelope.ts";
import type { DeliveryQueue } from "../delivery/queue.ts";
import { clientKey, createRateLimiter } from "../rate_limit.ts";
import { clientAddress, type TrustProxy } from "../http/client_address.ts";
import { type BodyBudget, refusedBody } from "../http/body_budget.ts";
import {
  contentLength,
  FRAGMENTED_REASON,
  RequestBody,
  type StopCause,
} from "../http/request_body.ts";
import {
  badRequest,
  contentEncoding,
  type Encoding,
  HEADER_MISSING,
  precheck,
  rateLimited,
  type Rejection,
  tooLarge,
  upstreamHeaders,
} from "./policy.ts";

/** What the tunnel needs to know; the app builds it from its `Config`. */
export interface TunnelOptions {
  /** DSNs envelopes may be forwarded for; empty disables the tunnel (503). */
  readonly allowedDsns: readonly Dsn[];
  /** Largest request body, counted on the wire (compressed if the client compressed it). */
  readonly maxBodyBytes: number;
  /** Take the client address from X-Forwarded-For instead of the socket. */
  readonly trustProxy: TrustProxy;
  /** Envelopes per client address per minute; 0 or absent: no per-client limit (nor share). */
  readonly rateLimit?: number;
  /** The overall budget per DSN (createDsnBudget), shared with CSP reports; absent: none. */
  readonly dsnBudget?: DsnBudget;
  /** Where accepted envelopes go (required while any DSN is allowed). */
  readonly delivery?: Pick<DeliveryQueue, "enqueue">;
  /** Milliseconds on a monotonic clock, for the per-client limit (tests pass their own). */
  readonly clock?: () => number;
  /** The server's budget for bodies in flight, shared with `ctx.json()`. */
  readonly bodies: BodyBudget;
}

/** Bodies up to this size with a Content-Length are read by Deno in one buffer, others in pieces. */
export const SMALL_BODY_BYTES = 64 * 1024;

const TEXT = "text/plain; charset=utf-8";

/** Spends one of a DSN key's forwards; the 429 once they are spent. */
export type DsnBudget = (key: string) => Rejection | undefined;

/** `limit` forwards per DSN per minute from all clients together, so that no set of client
 * addresses spends more of the quota; keyed by configured DSNs' keys only (checked first). */
export function createDsnBudget(limit: number, clock = () => performance.now()): DsnBudget {
  const limiter = createRateLimiter({ limit });
  return (key) => {
    const spent = limiter.take(key, clock());
    return spent.allowed ? undefined : rateLimited(spent.retryAfterSeconds, "for this DSN");
  };
}

/** Build the tunnel handler; a refusal's reason and body size (declared, else as far as it was
 * read) go into `ctx.refused`, which the app counts per client and reason (refusal_log.ts). */
export function createTunnelHandler(options: TunnelOptions) {
  const { allowedDsns, maxBodyBytes, bodies } = options;
  const clock = options.clock ?? (() => performance.now());
  const envelopeUrls = new Map(allowedDsns.map((dsn) => [dsn, ingestUrl(dsn, "envelope")]));
  const limiter = options.rateLimit ? createRateLimiter({ limit: options.rateLimit }) : undefined;
  const limits = { enabled: allowedDsns.length > 0, maxBodyBytes };

  /** Read the header line, check the DSN and the limits, read the rest and queue it. */
  async function forward(
    body: RequestBody,
    encoding: Encoding | null,
    headers: Record<string, string>,
  ): Promise<Rejection | undefined> {
    const head = await readHead(() => body.next(), encoding, body.declared ?? Infinity);
    if (!("line" in head)) return head;
    const named = parseEnvelopeHeader(head.line);
    if (typeof named === "string") return badRequest(named);
    const dsn = findAllowedDsn(named, allowedDsns);
    if (dsn === undefined) return { status: 403, reason: "envelope DSN is not allowed here" };
    // Read whole (within maxBodyBytes): the queue holds the bytes until the ingest takes them.
    while (!body.done) {
      const chunk = await body.next();
      if (chunk !== undefined) head.raw.append(chunk);
    }
    const bytes = head.raw.bytes();
    // A compressed body's items are not decoded: only a limit on every category holds it.
    const types = encoding === null ? itemTypes(bytes) : [];
    const url = envelopeUrls.get(dsn)!, key = dsn.publicKey;
    const decision = options.dsnBudget?.(key) ??
      options.delivery!.enqueue({ url, body: bytes, headers, key, itemTypes: types });
    return "reason" in decision ? decision : undefined;
  }

  return async function tunnelEnvelope(
    req: Request,
    info: Deno.ServeHandlerInfo,
    ctx?: { refused?: { reason: string; bytes?: number } },
  ): Promise<Response> {
    const refuse = ({ status, reason, headers }: Rejection, bytes: number) => {
      if (ctx) ctx.refused = { reason, bytes };
      return new Response(`${reason}\n`, { status, headers: { ...headers, "content-type": TEXT } });
    };
    const declared = contentLength(req.headers);
    const encoding = contentEncoding(req.headers.get("content-encoding"));
    const clientIp = clientAddress(req, info, options.trustProxy);
    const client = clientKey(clientIp); // the rate limit's and the budget's key
    let early = precheck(limits, declared, encoding);
    if (early === undefined && limiter !== undefined && clientIp !== "") {
      const decision = limiter.take(client, clock());
      if (!decision.allowed) early = rateLimited(decision.retryAfterSeconds);
    }
    // `req.body` is not touched for a small body with a length: it would build a stream.
    const empty = declared === 0 || (declared === null && req.body === null);
    if (early !== undefined || encoding === "unsupported" || empty) {
      req.body?.cancel().catch(() => {}); // refused unread, however large
      return refuse(early ?? HEADER_MISSING, declared ?? 0);
    }
    const body = new RequestBody(req, declared, maxBodyBytes, SMALL_BODY_BYTES, bodies, client);
    try {
      const refused = await forward(body, encoding, upstreamHeaders(req.headers, clientIp));
      if (refused !== undefined) return refuse(refused, declared ?? body.received);
      // Sentry's own answer once it has an envelope; the ingest's comes later, to the queue.
      return new Response("{}", { headers: { "content-type": "application/json" } });
    } catch (error) {
      if (body.cause === undefined || body.cause === "abandoned") throw error;
      return refuse(stopped(body.cause), declared ?? body.received);
    } finally {
      body.release();
    }
  };

  /** The answer to a transfer the tunnel cut short. */
  function stopped(cause: StopCause): Rejection {
    if (cause === "too-large") return tooLarge(maxBodyBytes);
    if (cause === "fragmented") return badRequest(FRAGMENTED_REASON);
    // Else nobody reads the answer to a client gone; the status labels the log line.
    return refusedBody(cause, bodies.limits) ??
      { status: 400, reason: "client closed the connection before the body was complete" };
  }
}
