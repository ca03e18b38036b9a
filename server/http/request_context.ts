/**
 * What the app knows about one request while it handles it, handed to its own handlers: the
 * request id (and how it is chosen) and path, and how to build the answer complete.
 *
 * Passed as an argument, not looked up: a WeakMap keyed by the Request held about 30 MB more
 * RSS under load (its entries live until a full collection).
 *
 * Every answer carries the security headers, HSTS when due, and the request id. Deno.serve
 * (2.9) prepares a new Response's headers for the wire in its constructor; reading or changing
 * `res.headers` afterwards drops that, and the headers are checked and converted a second time
 * on the way out. Adding the common headers after the handler had answered cost a page request
 * about a fifth of its CPU. So the app's own handlers (pages, static files, the app's refusals)
 * build their answers here, with every header at once, and the app leaves such an answer as it
 * is; any other answer (API routes, the tunnel) gets the common headers added afterwards.
 */
import { addSecurityHeaders, HSTS_VALUE, SECURITY_HEADERS } from "./security_headers.ts";

/** A request handler, as `Deno.serve` calls it. */
export type Handler = (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;

/** A handler inside the app, which also gets the request's context. */
export type ContextHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
  ctx: RequestContext,
) => Response | Promise<Response>;

/** A body the app's own handlers answer with. */
export type AnswerBody = Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;

/** One request's id and path; builds its answer and knows its size for the log. */
export class RequestContext {
  readonly requestId: string;
  /** The path the app routed on (request_target.ts), for tracing and the log. */
  readonly path: string;
  readonly #hsts: boolean;
  #built: Response | undefined;
  #bytes: number | null = null;

  constructor(requestId: string, hsts: boolean, path: string) {
    this.requestId = requestId;
    this.path = path;
    this.#hsts = hsts;
  }

  /**
   * A response with `headers` and the common ones. `bytes` is the body's size for the log
   * (the byte length of a `Uint8Array` body unless given).
   *
   * @example
   * ctx.send(page, 200, { "content-type": "text/html; charset=utf-8" });
   */
  send(
    body: AnswerBody,
    status: number,
    headers: Readonly<Record<string, string>>,
    bytes: number | null = body instanceof Uint8Array ? body.length : null,
  ): Response {
    const all: Record<string, string> = {
      ...headers,
      ...SECURITY_HEADERS,
      "x-request-id": this.requestId,
    };
    if (this.#hsts) all["strict-transport-security"] = HSTS_VALUE;
    const res = new Response(body, { status, headers: all });
    this.#built = res;
    this.#bytes = bytes;
    return res;
  }

  /**
   * The answer with every common header: as it is when {@link send} built it, otherwise with
   * them added (to a copy when its headers are immutable).
   */
  complete(res: Response): Response {
    if (res === this.#built) return res;
    res = addSecurityHeaders(res, this.#hsts);
    res.headers.set("x-request-id", this.requestId);
    this.#built = res;
    // The size for the log, where the handler declared it.
    const length = Number(res.headers.get("content-length") ?? NaN);
    this.#bytes = Number.isSafeInteger(length) ? length : null;
    return res;
  }

  /** The body size of the completed answer when known, else null (streamed, or not yet built). */
  get bytes(): number | null {
    return this.#bytes;
  }
}

// Accept a caller's id (from a proxy or load balancer) only if it is short and harmless.
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id to use: the incoming `X-Request-Id` if sane, else a new random one. */
export function requestIdFor(req: Request): string {
  const incoming = req.headers.get("x-request-id");
  return incoming !== null && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}

/**
 * The client's address: the socket's, or with `trustProxy` the last X-Forwarded-For entry, the
 * one the operator's proxy added (those before it are whatever the client sent).
 */
export function clientAddress(
  req: Request,
  info: Deno.ServeHandlerInfo,
  trustProxy: boolean,
): string {
  if (trustProxy) {
    const forwarded = req.headers.get("x-forwarded-for")?.split(",").at(-1)?.trim();
    if (forwarded) return forwarded;
  }
  return (info.remoteAddr as Partial<Deno.NetAddr>).hostname ?? "";
}
