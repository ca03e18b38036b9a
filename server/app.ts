/**
 * The application's request handler: the request target checked, then a table of routes, then
 * static files, then 404.
 * Every route is a plain `(req, info) => Response` function built from its dependencies,
 * so tests can call the whole app without a network.
 */
import type { Config } from "./config.ts";
import { MONITORING_PATH } from "./constants.ts";
import type { Manifest } from "./manifest.ts";
import type { Monitoring } from "./monitoring.ts";
import { internalError, methodNotAllowed, notFound, plainError } from "./pages.ts";
import { createPageHandler } from "./page.ts";
import { hasStaticFile, serveStatic, type StaticIndex } from "./static_files.ts";
import { createTunnelHandler } from "./tunnel.ts";
import { checkRequestLimits } from "./request_limits.ts";
import { formatRecord, LineWriter, requestIdFor } from "./request_log.ts";
import { isBadTarget, parseRequestTarget } from "./request_target.ts";
import { applySecurityHeaders, isHttps, onDenoDeploy } from "./security_headers.ts";

/** A request handler, as `Deno.serve` calls it. */
export type Handler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
) => Response | Promise<Response>;

/** What the app is built from; `main.ts` reads it all once at start-up. */
export interface AppDeps {
  readonly config: Config;
  readonly manifest: Manifest;
  readonly staticIndex: StaticIndex;
  /** The release reported to monitoring and on /healthz. */
  readonly release: string;
  readonly monitoring: Monitoring;
  /** Upstream fetch for the tunnel: the one from before monitoring wrapped `fetch`. */
  readonly fetch?: typeof fetch;
  /** Where request log lines go (one per request); stdout, batched, by default. */
  readonly logLine?: (line: string) => void;
  /** Every request arrives over TLS (see isHttps); by default, only on Deno Deploy. */
  readonly httpsListener?: boolean;
}

/**
 * Build the app's handler.
 *
 * @example
 * Deno.serve(createApp({ config, manifest, staticIndex, release }));
 */
export function createApp(deps: AppDeps): Handler {
  const { monitoring } = deps;
  // Only the app's own pages are traced: asset requests would be noise, and the tunnel's own
  // requests must never be traced or reported (they would feed themselves). Errors are caught
  // inside the span, so the event is linked to its trace.
  const traced = (handler: Handler) =>
    monitoring.instrumentHandler(caught(handler, monitoring), { shouldTrace: () => true });
  const page = traced(createPageHandler(deps));
  const health = traced(healthHandler(deps.release));
  // Maps, not objects: the path and the method are the client's, and an object would answer
  // `constructor` or `__proto__` from Object.prototype.
  const routes = new Map<string, Route>();
  if (deps.config.debugErrorRoute) {
    routes.set("/debug/error", route({ GET: traced(throwDebugError) }));
  }
  routes.set("/", route({ GET: page, HEAD: page }));
  routes.set("/healthz", route({ GET: health, HEAD: health }));
  routes.set(
    MONITORING_PATH,
    route({
      POST: createTunnelHandler({
        allowedDsns: deps.config.tunnelAllowedDsns,
        maxBodyBytes: deps.config.tunnelMaxBodyBytes,
        timeoutMs: deps.config.tunnelTimeoutMs,
        trustProxy: deps.config.trustProxy,
        fetch: deps.fetch,
      }),
    }),
  );

  const dispatch = async (req: Request, info: Deno.ServeHandlerInfo, path: string) => {
    try {
      const route = routes.get(path);
      if (route !== undefined) {
        const handler = route.methods.get(req.method);
        return handler ? await handler(req, info) : methodNotAllowed(route.allow);
      }
      if (req.method === "GET" || req.method === "HEAD") {
        return await serveStatic(deps.staticIndex, req, path) ?? notFound();
      }
      return hasStaticFile(deps.staticIndex, path) ? methodNotAllowed(["GET", "HEAD"]) : notFound();
    } catch (error) {
      return failed(error, monitoring);
    }
  };
  const stdout = defaultLogWriter();
  const logLine = deps.logLine ?? ((line: string) => stdout.write(line));
  const { hsts, logFormat } = deps.config;
  const transport = {
    httpsListener: deps.httpsListener ?? onDenoDeploy(),
    trustProxy: deps.config.trustProxy,
  };

  // Limits and the request target, then the route; security headers, request id and one log
  // line on every answer. The path is parsed here once and used for routing, static files,
  // tracing and the log.
  return async (req, info) => {
    const started = performance.now();
    const requestId = requestIdFor(req);
    const target = parseRequestTarget(req.url, req.headers.get("host"));
    let res = checkRequestLimits(req) ??
      (isBadTarget(target)
        ? plainError(400, target.reason)
        : await dispatch(req, info, target.path));
    res = applySecurityHeaders(res, { https: isHttps(req, transport), hsts });
    res.headers.set("x-request-id", requestId);
    logLine(formatRecord({
      time: new Date().toISOString(),
      method: req.method,
      // The path only: query strings can carry tokens and personal data that don't belong in logs.
      path: target.path,
      status: res.status,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      bytes: contentLength(res),
      requestId,
    }, logFormat));
    return res;
  };
}

/** The methods one path answers, and its Allow list for a 405. */
interface Route {
  readonly methods: ReadonlyMap<string, Handler>;
  readonly allow: readonly string[];
}

function route(methods: Readonly<Record<string, Handler>>): Route {
  return { methods: new Map(Object.entries(methods)), allow: Object.keys(methods) };
}

function caught(handler: Handler, monitoring: Monitoring): Handler {
  return async (req, info) => {
    try {
      return await handler(req, info);
    } catch (error) {
      return failed(error, monitoring);
    }
  };
}

function failed(error: unknown, monitoring: Monitoring): Response {
  console.error("request failed:", error);
  monitoring.captureError(error);
  return internalError();
}

let stdoutWriter: LineWriter | undefined;
/** The process-wide batched stdout writer, so shutdown can flush it. */
export function defaultLogWriter(): LineWriter {
  stdoutWriter ??= new LineWriter();
  return stdoutWriter;
}

// From the header only: reading `res.body` would turn a string body into a stream and cost
// Deno its fast path (and the Content-Length). Handlers that know their size set the header.
function contentLength(res: Response): number | null {
  const header = res.headers.get("content-length");
  return header === null ? null : Number(header);
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
