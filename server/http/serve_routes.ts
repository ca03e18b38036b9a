/** Every request's path: limits, target, route by exact path and method, a throw answered 500,
 * headers and a log line. Synchronous when the handler is, so Deno.serve sends with no promise. */
import type { ContextHandler, Handler, HstsMode } from "./request_context.ts";
import { hstsDue, isHttps, RequestContext, requestIdFor } from "./request_context.ts";
import { clientAddress, fromTrustedProxy, type TrustProxy } from "./client_address.ts";
import { answerOrElse, internalError, methodNotAllowed, plainError } from "./error_pages.ts";
import { checkRequestLimits, parseRequestTarget, requestHost } from "./request_target.ts";
import { formatNotice, formatRecord, type LogFormat } from "./request_log.ts";
import { createRefusalLog } from "./refusal_log.ts";

/** The methods one path answers, its Allow list, and its 405 answer (HTML, or JSON for APIs). */
export interface Route {
  readonly methods: ReadonlyMap<string, ContextHandler>;
  readonly allow: readonly string[];
  readonly refuse: (allow: readonly string[]) => Response;
}

/** A route from its handlers by method (a Map: the method is the client's string). */
export function route(
  methods: Readonly<Record<string, ContextHandler>>,
  refuse: (allow: readonly string[]) => Response = methodNotAllowed,
): Route {
  return { methods: new Map(Object.entries(methods)), allow: Object.keys(methods), refuse };
}

/** What is done with a fault a handler threw: logged and reported. Must not throw. */
export type Report = (error: unknown, req: Request) => void;

export interface ServeOptions {
  /** Routes by exact path (a Map: the path is the client's string). */
  readonly routes: ReadonlyMap<string, Route>;
  /** Any other path: static files, the not-found answers. */
  readonly fallback: ContextHandler;
  readonly report: Report;
  readonly logLine: (line: string) => void;
  readonly logFormat: LogFormat;
  readonly hsts: HstsMode;
  readonly trustProxy: TrustProxy;
  /** Every request arrives over TLS (a TLS listener, Deno Deploy). */
  readonly httpsListener: boolean;
  /** The hosts answered (ALLOWED_HOSTS), others 421 but on /healthz; all if absent. */
  readonly allowedHosts?: readonly string[];
  /** Where refusals are counted; by default into `logLine`, every 10 s. */
  readonly refusals?: ReturnType<typeof createRefusalLog>;
}

type Info = Deno.ServeHandlerInfo;
// Answers that refuse the request (4xx but a page not found, 503 too busy): counted, not lines.
const isRefusal = (status: number) =>
  (status >= 400 && status < 500 && status !== 404) || status === 503;

/** The server's handler over its routes. */
export function serveRoutes(options: ServeOptions): Handler {
  const { routes, fallback, report, logLine, logFormat, hsts, trustProxy } = options;
  const refusals = options.refusals ?? createRefusalLog(logLine, logFormat);
  const answered = (req: Request, info: Info, res: Response, ctx: RequestContext, t0: number) => {
    res = ctx.complete(res);
    refusals.flushDue();
    const refused = ctx.refused ??
      (isRefusal(res.status) && { reason: `${req.method} ${ctx.path}` });
    if (refused) {
      refusals.refused(clientAddress(req, info, trustProxy), res.status, refused, ctx.requestId);
      return res;
    }
    logLine(formatRecord({
      time: new Date().toISOString(),
      method: req.method,
      // The path only: a query string can carry tokens and personal data.
      path: ctx.path,
      status: res.status,
      durationMs: Math.round((performance.now() - t0) * 100) / 100,
      bytes: ctx.bytes,
      requestId: ctx.requestId,
    }, logFormat));
    return res;
  };
  const otherPaths = caught(fallback, report);
  const dispatch = (req: Request, info: Deno.ServeHandlerInfo, ctx: RequestContext) => {
    const route = routes.get(ctx.path);
    if (route === undefined) return otherPaths(req, info, ctx);
    const handler = route.methods.get(req.method);
    return handler ? caught(handler, report)(req, info, ctx) : route.refuse(route.allow);
  };
  // Load balancers check health by IP address: /healthz answers any host, and tells nothing.
  const misdirected = (url: string, path: string) =>
    options.allowedHosts && path !== "/healthz" && !options.allowedHosts.includes(requestHost(url))
      ? plainError(421, "this server does not answer for that host (see ALLOWED_HOSTS)")
      : null;
  const proxyHint = unheededProxyHint(trustProxy, (line) => logLine(formatNotice(line, logFormat)));
  return (req, info) => {
    const started = performance.now();
    proxyHint(req, info);
    const https = isHttps(req, { ...options, trustProxy: fromTrustedProxy(info, trustProxy) });
    const target = parseRequestTarget(req.url, req.headers.get("host"));
    const ctx = new RequestContext(requestIdFor(req), hstsDue({ https, hsts }), target.path, https);
    const res = checkRequestLimits(req) ??
      (target.reason !== undefined
        ? plainError(400, target.reason)
        : misdirected(req.url, target.path) ?? dispatch(req, info, ctx));
    return res instanceof Promise
      ? res.then((res) => answered(req, info, res, ctx, started))
      : answered(req, info, res, ctx, started);
  };
}

/** `handler`, answering `onError(error, req)` (and reporting) when it throws or rejects. */
export function caught(
  handler: ContextHandler,
  report: Report,
  onError: (error: unknown, req: Request) => Response = internalError,
): ContextHandler {
  return (req, info, ctx) =>
    answerOrElse(() => handler(req, info, ctx), (error) => {
      report(error, req);
      return onError(error, req);
    });
}

// Behind a proxy without TRUST_PROXY all clients share its address (and rate limit): said once.
function unheededProxyHint(trustProxy: TrustProxy, notice: (message: string) => void) {
  let said = trustProxy !== false;
  return (req: Request, info: Deno.ServeHandlerInfo) => {
    if (said || !req.headers.has("x-forwarded-for")) return;
    const address = clientAddress(req, info, false);
    if (!PRIVATE_ADDRESS.test(address)) return;
    said = true;
    notice(
      `requests from ${address} carry X-Forwarded-For but TRUST_PROXY is off, so every ` +
        `client shares that proxy's address (one tunnel rate limit and upload share for all); ` +
        `set TRUST_PROXY=true if the proxy is yours`,
    );
  };
}

// Loopback and private ranges (RFC 1918, RFC 4193), where a reverse proxy usually sits.
const PRIVATE_ADDRESS =
  /^(?:127\.|10\.|192\.168\.|172\.(?:1[6-9]|2\d|3[01])\.|::1$|f[cd][0-9a-f]{2}:|::ffff:(?:127|10)\.)/i;
