/** One request's context (id, path, HSTS due) and its answer with the common headers, all passed
 * at once to {@link RequestContext.send}: Deno.serve converts headers again on each change. */

import type { Refusal } from "./refusal_log.ts";

/** When to send Strict-Transport-Security. */
export type HstsMode = "auto" | "on" | "off";

// A year, the value browsers' preload lists expect; subdomains are left to the operator.
const HSTS_VALUE = "max-age=31536000";

/** The headers every answer carries. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
  "cross-origin-opener-policy": "same-origin",
  // The shell needs none of these powerful features; a screen that does can relax it here.
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
});

/** Pages' policy with SENTRY_FEEDBACK: Chromium checks `camera` for its screenshot's
 * getDisplayMedia (a "camera is not allowed" violation under `camera=()`). */
export const FEEDBACK_PERMISSIONS_POLICY = SECURITY_HEADERS["permissions-policy"]
  .replace("camera=()", "camera=(self)");

/** A request handler, as `Deno.serve` calls it. */
export type Handler = (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;

/** A handler inside the app: a {@link Handler} that also gets the request's context. */
export type ContextHandler = (
  ...args: [...Parameters<Handler>, ctx: RequestContext]
) => ReturnType<Handler>;

/** A body the app's own handlers answer with. */
export type AnswerBody = Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | null;

/** One request's id and path; builds its answer and knows its size for the log. */
export class RequestContext {
  readonly #common: Record<string, string>;
  #built: Response | undefined;
  /** The body size of the completed answer when known, else null (streamed, or not yet built). */
  bytes: number | null = null;
  /** Why the request was refused, if it was, by what refused it: counted, not logged alone. */
  refused: Refusal | undefined;

  /** `path`: the one the app routed on (request_target.ts), for tracing and the log; `https`: the
   * request came over HTTPS ({@link isHttps}). */
  constructor(
    readonly requestId: string,
    hsts: boolean,
    readonly path: string,
    readonly https = false,
  ) {
    this.#common = { ...SECURITY_HEADERS, "x-request-id": requestId };
    if (hsts) this.#common["strict-transport-security"] = HSTS_VALUE;
  }

  /** A response with the common headers and `headers` (which win: a page's Permissions-Policy);
   * `bytes` is the body's size for the log. */
  send(
    body: AnswerBody,
    status: number,
    headers: Readonly<Record<string, string>>,
    bytes: number | null = body instanceof Uint8Array ? body.length : null,
  ): Response {
    this.#built = new Response(body, { status, headers: { ...this.#common, ...headers } });
    this.bytes = bytes;
    return this.#built;
  }

  /** The answer with every common header (added to a copy when its headers are immutable). */
  complete(res: Response): Response {
    if (res === this.#built) return res;
    try {
      res.headers.set("x-request-id", this.requestId);
    } catch {
      res = new Response(res.body, res);
    }
    for (const [name, value] of Object.entries(this.#common)) res.headers.set(name, value);
    this.#built = res;
    const length = Number(res.headers.get("content-length") ?? NaN);
    this.bytes = Number.isSafeInteger(length) ? length : null;
    return res;
  }
}

/** Whether the request came over HTTPS: `httpsListener`, or X-Forwarded-Proto with `trustProxy`;
 * never `req.url`'s scheme, which a client sets. Browsers ignore HSTS over HTTP. */
export function isHttps(req: Request, on: { httpsListener: boolean; trustProxy: boolean }) {
  if (on.httpsListener) return true;
  const proto = on.trustProxy ? req.headers.get("x-forwarded-proto") : null;
  return proto?.split(",")[0].trim().toLowerCase() === "https";
}

/** Whether Strict-Transport-Security goes on this answer. */
export function hstsDue(options: { https: boolean; hsts: HstsMode }): boolean {
  return options.hsts === "on" || (options.hsts === "auto" && options.https);
}

/** Whether this runs on Deno Deploy (it terminates TLS); the variable is read only if allowed. */
export function onDenoDeploy(): boolean {
  const variable = "DENO_DEPLOYMENT_ID";
  const granted = Deno.permissions.querySync({ name: "env", variable }).state === "granted";
  return granted && !!Deno.env.get(variable);
}

// Accept a caller's id (from a proxy or load balancer) only if it is short and harmless.
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id to use: the incoming `X-Request-Id` if sane, else a new random one. */
export function requestIdFor(req: Request): string {
  const incoming = req.headers.get("x-request-id");
  return incoming !== null && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
}
