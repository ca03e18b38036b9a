/**
 * The app's pages: `client/routes.tsx` declares them, and each is rendered to HTML once, when the
 * handlers are built. A request only picks its page's template by exact path (a Map lookup) and
 * splices its nonce and trace tags in. Every other path shares one not-found template, so no
 * path a client makes up is ever rendered or cached.
 */
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { App } from "../../client/App.tsx";
import type { ResolvedPage, Routes } from "../../client/page_table.ts";
import type { AppDeps } from "../http/app_deps.ts";
import type { ContextHandler } from "../http/handler.ts";
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
  deps: Pick<AppDeps, "manifest" | "config" | "release" | "monitoring"> & {
    readonly routes: Routes;
  },
): PageHandlers {
  const { config, monitoring } = deps;
  const clientConfig = config.sentryDsn === undefined ? {} : {
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

  const handlerFor = (page: ResolvedPage, status: number, traced: boolean): ContextHandler => {
    const render = createDocumentRenderer(deps.manifest, {
      title: page.title,
      appHtml: renderToString(createElement(App, { page })),
      clientConfig,
      devScript,
    });
    return (_req, _info, ctx) => {
      const nonce = createNonce();
      // Untraced answers (the 404) carry no trace for the browser to continue.
      const parts: RequestParts = { nonce, headTags: traced ? monitoring.traceMetaTags(ctx) : "" };
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
  for (const [path, page] of deps.routes.pages) pages.set(path, handlerFor(page, 200, true));
  return { pages, notFound: handlerFor(deps.routes.notFound, 404, false) };
}
