/**
 * `GET /`: the server-rendered shell.
 */
import type { AppDeps, Handler } from "./app.ts";
import { DEV_PATHS, MONITORING_PATH } from "./constants.ts";
import { contentSecurityPolicy, createNonce, sentryCspReportUri } from "./csp.ts";
import { createDocumentRenderer } from "./render.ts";

/** Build the handler for the HTML page. */
export function createPageHandler(
  deps: Pick<AppDeps, "manifest" | "config" | "release" | "monitoring">,
): Handler {
  const { config, monitoring } = deps;
  const render = createDocumentRenderer(deps.manifest, {
    title: "App",
    clientConfig: config.sentryDsn === undefined ? {} : {
      sentry: {
        dsn: config.sentryDsn,
        environment: config.sentryEnvironment,
        release: deps.release,
        tracesSampleRate: config.tracesSampleRate,
        tunnel: MONITORING_PATH,
      },
    },
    devScript: config.devMode ? DEV_PATHS.client : undefined,
  });
  // The dev inbox's DSN names no real ingest: violation reports would go nowhere.
  const ownDsn = config.sentryDsn === undefined || config.devInbox
    ? undefined
    : config.tunnelAllowedDsns[0];
  const reportUri = ownDsn &&
    sentryCspReportUri(ownDsn, { environment: config.sentryEnvironment, release: deps.release });
  const encoder = new TextEncoder();
  return (req) => {
    const nonce = createNonce();
    const body = encoder.encode(render({ nonce, headTags: monitoring.traceMetaTags(req) }));
    const headers = {
      "content-type": "text/html; charset=utf-8",
      // The page carries per-request parts (nonce, trace), so caches must revalidate.
      "cache-control": "no-cache",
      "content-security-policy": contentSecurityPolicy(nonce, reportUri),
      "content-length": String(body.length),
    };
    return new Response(req.method === "HEAD" ? null : body, { headers });
  };
}
