/**
 * `GET /`: the server-rendered shell.
 */
import type { AppDeps, Handler } from "./app.ts";
import { MONITORING_PATH } from "./constants.ts";
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
  });
  return () => {
    const html = render({ nonce: createNonce(), headTags: monitoring.traceMetaTags() });
    const headers = {
      "content-type": "text/html; charset=utf-8",
      // The page carries per-request parts (nonce, trace), so caches must revalidate.
      "cache-control": "no-cache",
    };
    // Deno drops the body of a HEAD response itself and keeps the Content-Length.
    return new Response(html, { headers });
  };
}

/** A fresh 128-bit nonce, base64-encoded. */
export function createNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}
