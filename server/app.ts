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
        fetch: deps.fetch,
      }),
    },
  };

  const handler: Handler = async (req, info) => {
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
  return deps.monitoring.instrumentHandler(handler, { untraced: [MONITORING_PATH] });
}

// Lets an operator (and the end-to-end tests) check that server errors reach Sentry.
function throwDebugError(): never {
  throw new Error("Debug error from GET /debug/error: server monitoring works");
}

function healthHandler(release: string): Handler {
  const body = JSON.stringify({ status: "ok", release });
  return () =>
    new Response(body, {
      headers: { "content-type": "application/json", "cache-control": "no-store" },
    });
}
