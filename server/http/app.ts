/**
 * The application's request handler: the request target checked, then a table of routes (the
 * server's own, the API's and the pages'), then static files, then 404.
 * Every route is a plain `(req, info, ctx) => Response` function built from its dependencies
 * (`ctx`: the request's context, server/http/request_context.ts), so tests can call the whole
 * app without a network.
 */
import {
  apiInternalError,
  apiMethodNotAllowed,
  apiNotFound,
  apiRouteEntries,
  isApiPath,
} from "../api/router.ts";
import { apiRoutes as appApiRoutes } from "../api/routes.ts";
import type { AppDeps } from "./app_deps.ts";
import type { ContextHandler, Handler } from "./handler.ts";
import { internalError, methodNotAllowed, notFound, plainError } from "./error_pages.ts";
import { createPageHandlers } from "../page/handler.ts";
import { hasStaticFile, serveStatic } from "./static_files.ts";
import { createTunnelHandler } from "../tunnel/handler.ts";
import { checkRequestLimits } from "./request_limits.ts";
import { formatRecord, formatTunnelRecord, stdoutLog } from "./request_log.ts";
import { isBadTarget, parseRequestTarget } from "./request_target.ts";
import { RequestContext, requestIdFor } from "./request_context.ts";
import { hstsDue, isHttps, onDenoDeploy } from "./security_headers.ts";
import { defaultFailureLog } from "./failure_log.ts";

/**
 * Build the app's handler.
 *
 * @example
 * Deno.serve(createApp({ config, manifest, staticIndex, pages, release, monitoring }));
 */
export function createApp(deps: AppDeps): Handler {
  const { monitoring } = deps;
  const failureLog = deps.failureLog ?? defaultFailureLog();
  // A handler's fault is logged and reported, each within its own limit per distinct error.
  // Neither may throw out of here: the answer is the route's own 500 either way.
  const report: Report = (error, req) => {
    try {
      failureLog.failed("request failed:", error);
    } finally {
      try {
        monitoring.captureError(error, req);
      } catch (fault) {
        failureLog.failed("monitoring could not report it:", fault);
      }
    }
  };
  // Only the app's own pages are traced: asset requests would be noise, and the tunnel's own
  // requests must never be traced or reported (they would feed themselves). Errors are caught
  // inside the span, so the event is linked to its trace.
  const traced = (handler: ContextHandler, onError = internalError) =>
    monitoring.instrumentHandler(caught(handler, report, onError));
  // Not traced: load balancers poll it every few seconds, which at the sample rate would fill
  // Sentry with health checks.
  const health = caught(healthHandler(deps.release), report, internalError);
  // Maps, not objects: the path and the method are the client's, and an object would answer
  // `constructor` or `__proto__` from Object.prototype.
  const routes = new Map<string, Route>();
  if (deps.config.debugErrorRoute) {
    routes.set("/debug/error", route({ GET: traced(throwDebugError) }));
  }
  routes.set("/healthz", route({ GET: health, HEAD: health }));
  routes.set(
    deps.config.tunnelPath,
    route({
      POST: createTunnelHandler({
        allowedDsns: deps.config.tunnelAllowedDsns,
        maxBodyBytes: deps.config.tunnelMaxBodyBytes,
        timeoutMs: deps.config.tunnelTimeoutMs,
        trustProxy: deps.config.trustProxy,
        rateLimit: deps.config.tunnelRateLimit,
        fetch: deps.fetch,
        // Refusals go to the request log, under the id of the request refused.
        log: (record, requestId) => logLine(formatTunnelRecord(record, requestId, logFormat)),
      }),
    }),
  );
  const add = (path: string, entry: Route) => {
    if (routes.has(path)) throw new Error(`${path} is declared twice (server, API or page route)`);
    routes.set(path, entry);
  };
  const apiOptions = {
    trustProxy: deps.config.trustProxy,
    maxBodyBytes: deps.config.apiMaxBodyBytes,
  };
  for (const [path, methods] of apiRouteEntries(deps.apiRoutes ?? appApiRoutes, apiOptions)) {
    const handlers = Object.entries(methods).map(([m, h]) => [m, traced(h, apiInternalError)]);
    add(path, route(Object.fromEntries(handlers), apiMethodNotAllowed));
  }
  const pages = createPageHandlers(deps);
  for (const [path, handler] of pages.pages) {
    if (isApiPath(path)) throw new Error(`page ${path} is under the API's prefix`);
    const page = traced(handler);
    add(path, route({ GET: page, HEAD: page }));
  }
  // Not traced, like static files: span names would carry any path a client makes up.
  const notFoundPage = caught(pages.notFound, report, internalError);
  // Any other path: a static file, else the API's JSON 404 or the app's not-found page.
  // Synchronous like dispatch: serveStatic answers null at once for a path it does not have,
  // and an asset kept in memory needs no promise.
  const fallback = (req: Request, info: Deno.ServeHandlerInfo, ctx: RequestContext) => {
    const path = ctx.path;
    const api = isApiPath(path);
    if (req.method === "GET" || req.method === "HEAD") {
      return serveStatic(deps.staticIndex, req, path, ctx) ??
        (api ? apiNotFound() : notFoundPage(req, info, ctx));
    }
    if (hasStaticFile(deps.staticIndex, path)) return methodNotAllowed(["GET", "HEAD"]);
    return api ? apiNotFound() : notFound();
  };

  // Synchronous when the route's handler is (the pages are): each promise on the way costs
  // about a microsecond, and Deno.serve takes a Response as it is.
  const dispatch = (req: Request, info: Deno.ServeHandlerInfo, ctx: RequestContext) => {
    const route = routes.get(ctx.path);
    if (route === undefined) return settle(fallback, req, info, ctx, report);
    const handler = route.methods.get(req.method);
    return handler ? settle(handler, req, info, ctx, report) : route.refuse(route.allow);
  };
  const { hsts, logFormat } = deps.config;
  const logLine = deps.logLine ?? stdoutLog(logFormat);
  const transport = {
    httpsListener: deps.httpsListener ?? onDenoDeploy(),
    trustProxy: deps.config.trustProxy,
  };
  const answered = (req: Request, res: Response, ctx: RequestContext, started: number) => {
    res = ctx.complete(res);
    logLine(formatRecord({
      time: new Date().toISOString(),
      method: req.method,
      // The path only: query strings can carry tokens and personal data that don't belong in logs.
      path: ctx.path,
      status: res.status,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      bytes: ctx.bytes,
      requestId: ctx.requestId,
    }, logFormat));
    return res;
  };

  // Limits and the request target, then the route; security headers, request id and one log
  // line on every answer. The path is parsed here once and used for routing, static files,
  // tracing and the log.
  return (req, info) => {
    const started = performance.now();
    const https = hsts !== "off" && isHttps(req, transport);
    const target = parseRequestTarget(req.url, req.headers.get("host"));
    const ctx = new RequestContext(requestIdFor(req), hstsDue({ https, hsts }), target.path);
    const res = checkRequestLimits(req) ??
      (isBadTarget(target) ? plainError(400, target.reason) : dispatch(req, info, ctx));
    return res instanceof Promise
      ? res.then((res) => answered(req, res, ctx, started))
      : answered(req, res, ctx, started);
  };
}

/** The methods one path answers, its Allow list, and its 405 answer (HTML, or JSON for APIs). */
interface Route {
  readonly methods: ReadonlyMap<string, ContextHandler>;
  readonly allow: readonly string[];
  readonly refuse: (allow: readonly string[]) => Response;
}

function route(
  methods: Readonly<Record<string, ContextHandler>>,
  refuse: (allow: readonly string[]) => Response = methodNotAllowed,
): Route {
  return { methods: new Map(Object.entries(methods)), allow: Object.keys(methods), refuse };
}

/** What is done with a fault a handler threw: logged and reported (see createApp). */
type Report = (error: unknown, req: Request, ctx: RequestContext) => void;

function caught(
  handler: ContextHandler,
  report: Report,
  onError: () => Response,
): ContextHandler {
  return (req, info, ctx) => settle(handler, req, info, ctx, report, onError);
}

// Call a handler and turn what it throws or rejects with into an error answer, without a
// promise when the handler answered synchronously.
function settle(
  handler: ContextHandler,
  req: Request,
  info: Deno.ServeHandlerInfo,
  ctx: RequestContext,
  report: Report,
  onError = internalError,
): Response | Promise<Response> {
  try {
    const res = handler(req, info, ctx);
    return res instanceof Promise
      ? res.catch((error) => failed(error, req, ctx, report, onError))
      : res;
  } catch (error) {
    return failed(error, req, ctx, report, onError);
  }
}

function failed(
  error: unknown,
  req: Request,
  ctx: RequestContext,
  report: Report,
  answer = internalError,
): Response {
  report(error, req, ctx);
  return answer();
}

// Lets an operator (and the end-to-end tests) check that server errors reach Sentry.
function throwDebugError(): never {
  // Sentry's dedupe integration drops an error identical to the one sent just before it (same
  // type, message and frames, compared by file, function, line and column), so a second GET
  // would send nothing. The message stays fixed and every other call throws the error made
  // one line further down: dedupe sees different frames, while Sentry groups JavaScript frames
  // by file, function and source text, not line, so all of them stay one issue.
  const self = throwDebugError as typeof throwDebugError & { calls?: number };
  self.calls = (self.calls ?? 0) + 1;
  const message = "Debug error from GET /debug/error: server monitoring works";
  const twins = [
    new Error(message),
    new Error(message),
  ];
  throw twins[self.calls % 2];
}

function healthHandler(release: string): Handler {
  const body = new TextEncoder().encode(JSON.stringify({ status: "ok", release }));
  return () =>
    new Response(body, {
      headers: {
        "content-type": "application/json",
        "cache-control": "no-store",
        "content-length": String(body.length),
      },
    });
}
