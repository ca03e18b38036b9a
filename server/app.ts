/**
 * The application's request handler: a table of routes, then static files, then 404.
 * Every route is a plain `(req, info) => Response` function built from its dependencies,
 * so tests can call the whole app without a network.
 */
import type { Config } from "./config.ts";
import { MONITORING_PATH } from "./constants.ts";
import type { Manifest } from "./manifest.ts";
import type { Monitoring } from "./monitoring.ts";
import { internalError, methodNotAllowed, notFound } from "./pages.ts";
import { createPageHandler } from "./page.ts";
import { hasStaticFile, serveStatic, type StaticIndex } from "./static_files.ts";
import { createTunnelHandler } from "./tunnel.ts";
import { checkRequestLimits } from "./request_limits.ts";
import { formatRecord, LineWriter, requestIdFor } from "./request_log.ts";
import { formatTunnelRecord } from "./tunnel_log.ts";
import { applySecurityHeaders, isHttps } from "./security_headers.ts";

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
}

/**
 * Build the app's handler.
 *
 * @example
 * Deno.serve(createApp({ config, manifest, staticIndex, release }));
 */
export function createApp(deps: AppDeps): Handler {
  const page = createPageHandler(deps);
  const health = healthHandler(deps.release);
  // The tunnel logs refusals through the request log, under the id of the request refused.
  const requestIds = new WeakMap<Request, string>();
  const routes: Record<string, Record<string, Handler>> = {
    ...(deps.config.debugErrorRoute ? { "/debug/error": { GET: throwDebugError } } : {}),
    "/": { GET: page, HEAD: page },
    "/healthz": { GET: health, HEAD: health },
    [MONITORING_PATH]: {
      POST: createTunnelHandler({
        allowedDsns: deps.config.tunnelAllowedDsns,
        maxBodyBytes: deps.config.tunnelMaxBodyBytes,
        timeoutMs: deps.config.tunnelTimeoutMs,
        trustProxy: deps.config.trustProxy,
        rateLimit: deps.config.tunnelRateLimit,
        fetch: deps.fetch,
        log: (record, req) => logLine(formatTunnelRecord(record, requestIds.get(req), logFormat)),
      }),
    },
  };

  const route: Handler = async (req, info) => {
    try {
      const { pathname } = new URL(req.url);
      const route = routes[pathname];
      if (route !== undefined) {
        const handler = route[req.method];
        return handler ? await handler(req, info) : methodNotAllowed(Object.keys(route));
      }
      if (req.method === "GET" || req.method === "HEAD") {
        return await serveStatic(deps.staticIndex, req, pathname) ?? notFound();
      }
      return hasStaticFile(deps.staticIndex, pathname)
        ? methodNotAllowed(["GET", "HEAD"])
        : notFound();
    } catch (error) {
      console.error("request failed:", error);
      deps.monitoring.captureError(error);
      return internalError();
    }
  };
  const traced = deps.monitoring.instrumentHandler(route, {
    // Only the app's own routes: asset requests would be noise, and the tunnel's own
    // requests must never be traced or reported (they would feed themselves).
    shouldTrace: (pathname) => pathname in routes && pathname !== MONITORING_PATH,
  });
  const stdout = defaultLogWriter();
  const logLine = deps.logLine ?? ((line: string) => stdout.write(line));
  const { trustProxy, hsts, logFormat } = deps.config;

  // Limits, then the route; security headers, request id and one log line on every answer.
  return async (req, info) => {
    const started = performance.now();
    const requestId = requestIdFor(req);
    requestIds.set(req, requestId);
    let res = checkRequestLimits(req) ?? await traced(req, info);
    res = applySecurityHeaders(res, { https: isHttps(req, trustProxy), hsts });
    res.headers.set("x-request-id", requestId);
    logLine(formatRecord({
      time: new Date().toISOString(),
      method: req.method,
      path: pathForLog(req.url),
      status: res.status,
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      bytes: contentLength(res),
      requestId,
    }, logFormat));
    return res;
  };
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

// The path only: query strings can carry tokens and personal data that don't belong in logs.
function pathForLog(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const path = start === -1 ? "/" : url.slice(start);
  const end = path.search(/[?#]/);
  return end === -1 ? path : path.slice(0, end);
}

// Lets an operator (and the end-to-end tests) check that server errors reach Sentry.
function throwDebugError(): never {
  throw new Error("Debug error from GET /debug/error: server monitoring works");
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
