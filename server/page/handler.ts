/**
 * The app's pages: `client/routes.tsx` declares them, React renders each to HTML ahead of time
 * (render.ts), and here each becomes a document template once, when the handlers are built. A
 * request only picks its page's template by exact path (a Map lookup) and splices its nonce and
 * trace tags in. Every other path shares one not-found template, so no path a client makes up
 * is ever rendered or cached.
 */
import type { Manifest } from "../build/manifest.ts";
import type { Config } from "../lifecycle/config.ts";
import type { Monitoring } from "../monitoring/monitoring.ts";
import type { RenderedPages } from "./rendered_pages.ts";
import type { RenderedPage } from "./rendered_pages.ts";
import type { ContextHandler } from "../http/request_context.ts";
import { DEV_PATHS } from "../constants.ts";
import { createNonce, cspWriter, sentryCspReportUri } from "./csp.ts";
import { createDocumentRenderer, type RequestParts } from "./document.ts";

/** The handlers for the declared pages and for the not-found page. */
export interface PageHandlers {
  /** One `GET`/`HEAD` handler per declared page, by exact path. */
  readonly pages: ReadonlyMap<string, ContextHandler>;
  /** The app's not-found page, with status 404, for a `GET`/`HEAD` of any other path. */
  readonly notFound: ContextHandler;
}

/** Render every page once and build the handlers that serve them. */
export function createPageHandlers(
  deps: {
    readonly manifest: Manifest;
    readonly config: Config;
    readonly release: string;
    readonly monitoring: Monitoring;
    readonly pages: RenderedPages;
  },
): PageHandlers {
  const { config, monitoring } = deps;
  const publicConfig = Object.keys(config.publicVariables).length > 0
    ? { public: config.publicVariables }
    : {};
  const clientConfig = config.sentryDsn === undefined ? publicConfig : {
    ...publicConfig,
    sentry: {
      dsn: config.sentryDsn,
      environment: config.sentryEnvironment,
      release: deps.release,
      tracesSampleRate: config.tracesSampleRate,
      tunnel: config.tunnelPath,
    },
  };
  const devScript = config.devMode ? DEV_PATHS.client : undefined;
  // The dev inbox's DSN names no real ingest: violation reports would go nowhere.
  const ownDsn = config.sentryDsn === undefined || config.devInbox
    ? undefined
    : config.tunnelAllowedDsns[0];
  const reportUri = ownDsn &&
    sentryCspReportUri(ownDsn, { environment: config.sentryEnvironment, release: deps.release });
  const csp = cspWriter(reportUri);

  const handlerFor = (page: RenderedPage, status: number, traced: boolean): ContextHandler => {
    const render = createDocumentRenderer(deps.manifest, {
      title: page.title,
      appHtml: page.appHtml,
      clientConfig,
      devScript,
    });
    return (_req, _info, ctx) => {
      const nonce = createNonce();
      // Untraced answers (the 404) carry no trace for the browser to continue.
      const parts: RequestParts = { nonce, headTags: traced ? monitoring.traceMetaTags() : "" };
      const body = render(parts);
      return ctx.send(body, status, {
        "content-type": "text/html; charset=utf-8",
        // The page carries per-request parts (nonce, trace), so caches must revalidate.
        "cache-control": "no-cache",
        "content-security-policy": csp(nonce),
      });
    };
  };

  const pages = new Map<string, ContextHandler>();
  for (const [path, page] of deps.pages.pages) pages.set(path, handlerFor(page, 200, true));
  return { pages, notFound: handlerFor(deps.pages.notFound, 404, false) };
}
