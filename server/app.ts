/** The composition root: server, API and page routes, then static files, behind serveRoutes. */
import {
  apiInternalError,
  apiMethodNotAllowed,
  apiNotFound,
  apiRouteEntries,
  type ApiRoutes,
  isApiPath,
} from "./api/router.ts";
import { apiRoutes as appApiRoutes } from "./api/routes.ts";
import { createPageHandlers, type PageDeps } from "./page/handler.ts";
import { createDsnBudget, createTunnelHandler, type TunnelOptions } from "./tunnel/handler.ts";
import { createBodyBudget } from "./http/body_budget.ts";
import { createCspReportHandler } from "./tunnel/csp_reports.ts";
import { cspReports } from "./page/csp.ts";
import { answerText, internalError, methodNotAllowed, notFound } from "./http/error_pages.ts";
import { defaultFailureLog, type FailureLog } from "./http/failure_log.ts";
import { type ContextHandler, type Handler, onDenoDeploy } from "./http/request_context.ts";
import { stdoutLog } from "./http/request_log.ts";
import { caught, type Report, type Route, route, serveRoutes } from "./http/serve_routes.ts";
import type { ServeOptions } from "./http/serve_routes.ts";
import { hasStaticFile, serveStatic, type StaticIndex } from "./http/static_files.ts";

/** What the app is built from; server/lifecycle/boot.ts gathers it once at start-up. */
export interface AppDeps extends PageDeps {
  readonly staticIndex: StaticIndex;
  /** The process's delivery queue (server/delivery/queue.ts), present while any DSN is allowed. */
  readonly delivery?: TunnelOptions["delivery"];
  /** Where handlers' faults are logged, within a limit; the process's, on stderr, by default. */
  readonly failureLog?: FailureLog;
  /** Where request log lines go (one per request); stdout by default. */
  readonly logLine?: (line: string) => void;
  /** Where refusals are counted (tests pass a clock); by default into `logLine`. */
  readonly refusals?: ServeOptions["refusals"];
  /** The API routes; by default the app's own, from `server/api/routes.ts`. */
  readonly apiRoutes?: ApiRoutes;
}

/** Build the app's handler. */
export function createApp(deps: AppDeps): Handler {
  const { config, monitoring } = deps;
  const { trustProxy, tunnelRateLimit: rateLimit } = config;
  const failureLog = deps.failureLog ?? defaultFailureLog();
  const logLine = deps.logLine ?? stdoutLog(config.logFormat);
  // Must not throw: failed() never does, and a fault of monitoring is only logged.
  const report: Report = (error, req) => {
    failureLog.failed("request failed:", error);
    try {
      monitoring.captureError(error, req);
    } catch (fault) {
      failureLog.failed("monitoring could not report it:", fault);
    }
  };
  // App handlers only (assets are noise, the tunnel would trace itself); caught inside the span.
  const traced = (handler: ContextHandler, onError: Parameters<typeof caught>[2] = internalError) =>
    monitoring.instrumentHandler(caught(handler, report, onError));

  const routes = new Map<string, Route>();
  const add = (path: string, entry: Route) => {
    if (routes.has(path)) throw new Error(`${path} is declared twice (server, API or page route)`);
    routes.set(path, entry);
  };
  const healthBody = JSON.stringify({ status: "ok", release: deps.release });
  const health = caught(() => answerText(200, "application/json", healthBody), report);
  add("/healthz", route({ GET: health, HEAD: health }));
  if (config.debugErrorRoute) add("/debug/error", route({ GET: traced(throwDebugError) }));
  const bodies = createBodyBudget(config.bodies); // the tunnel's and the API's: their memory
  // Off with the per-client limit: TUNNEL_RATE_LIMIT=0 (load tests, one trusted client).
  const dsnLimit = rateLimit && config.tunnelDsnRateLimit;
  const dsnBudget = dsnLimit ? createDsnBudget(dsnLimit) : undefined;
  const tunnel = createTunnelHandler({
    allowedDsns: config.tunnelAllowedDsns,
    maxBodyBytes: config.tunnelMaxBodyBytes,
    trustProxy,
    rateLimit,
    dsnBudget,
    delivery: deps.delivery,
    bodies,
  });
  add(config.tunnelPath, route({ POST: tunnel }));
  const csp = cspReports(config, deps.release);
  if (csp && deps.delivery) {
    const key = config.tunnelAllowedDsns[0].publicKey; // the app's own DSN comes first
    const options = { ...csp, key, trustProxy, rateLimit, bodies, dsnBudget };
    add(csp.path, route({ POST: createCspReportHandler({ ...options, delivery: deps.delivery }) }));
  }
  const apiOptions = { trustProxy, maxBodyBytes: config.apiMaxBodyBytes, bodies };
  for (const [path, methods] of apiRouteEntries(deps.apiRoutes ?? appApiRoutes, apiOptions)) {
    const handlers = Object.entries(methods).map(([m, h]) => [m, traced(h, apiInternalError)]);
    add(path, route(Object.fromEntries(handlers), apiMethodNotAllowed));
  }
  const pages = createPageHandlers(deps);
  for (const [path, handler] of pages.pages) {
    if (isApiPath(path)) throw new Error(`page ${path} is under the API's prefix`);
    const page = traced(handler, pages.error);
    add(path, route({ GET: page, HEAD: page }));
    // `/about/` is the same page as `/about`: one address for it, kept by a permanent redirect.
    if (path !== "/") {
      // The query as the URL parser encodes it: Deno gives it decoded, a header takes Latin-1.
      const redirect: ContextHandler = (req) =>
        new Response(null, { status: 308, headers: { location: path + new URL(req.url).search } });
      add(`${path}/`, route({ GET: redirect, HEAD: redirect }));
    }
  }
  // Not traced, like static files: span names would carry any path a client makes up.
  const notFoundPage = caught(pages.notFound, report);
  const fallback: ContextHandler = (req, info, ctx) => {
    const api = isApiPath(ctx.path);
    if (req.method === "GET" || req.method === "HEAD") {
      return serveStatic(deps.staticIndex, req, ctx.path, ctx) ??
        (api ? apiNotFound() : notFoundPage(req, info, ctx));
    }
    if (hasStaticFile(deps.staticIndex, ctx.path)) return methodNotAllowed(["GET", "HEAD"]);
    return api ? apiNotFound() : notFound();
  };
  return serveRoutes({
    routes,
    fallback,
    report,
    logLine,
    logFormat: config.logFormat,
    hsts: config.hsts,
    trustProxy,
    httpsListener: onDenoDeploy(),
    refusals: deps.refusals,
    allowedHosts: config.allowedHosts,
  });
}

// Lets an operator (and the end-to-end tests) check that server errors reach Sentry.
let debugErrors = 0;
function throwDebugError(): never {
  // Two errors made at two places (columns) defeat Sentry's dedupe of a repeat of the last error;
  // grouping keeps one issue.
  const message = "Debug error from GET /debug/error: server monitoring works";
  throw [new Error(message), new Error(message)][++debugErrors % 2];
}
