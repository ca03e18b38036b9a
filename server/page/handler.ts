/** The app's pages: prerendered, or with a loader streamed per request; every other path shares
 * one not-found page, so no path a client makes up is ever rendered. */
import type { Shell } from "./render.ts";
import type { Manifest } from "../build/manifest.ts";
import type { Config } from "../lifecycle/config.ts";
import type { Monitoring } from "../monitoring/monitoring.ts";
import type { RenderedPage, RenderedPages } from "./rendered_pages.ts";
import type { PageLoader } from "../define.ts";
import {
  type AnswerBody,
  type ContextHandler,
  FEEDBACK_PERMISSIONS_POLICY,
  type RequestContext,
} from "../http/request_context.ts";
import { clientAddress } from "../http/client_address.ts";
import { DEV_PATHS } from "../constants.ts";
import { contentSecurityPolicy, createNonce, cspReports } from "./csp.ts";
import { documentShell } from "./document.ts";

/** A page with a loader: its head and chunk, component, and loader (server/pages.ts). */
export interface LivePage extends Omit<RenderedPage, "appHtml"> {
  readonly Page: Parameters<Shell>[0]["Page"];
  readonly loader: PageLoader;
}

/** What pages with loaders need: the pages and React's streaming renderer. */
export interface LivePages {
  readonly pages: ReadonlyMap<string, LivePage>;
  renderStream(Page: LivePage["Page"], data: unknown, nonce: string): Promise<ReadableStream>;
}

/** What the pages are served from (part of the app's dependencies). */
export interface PageDeps {
  readonly config: Config;
  readonly manifest: Manifest;
  /** The pages of `server/pages.ts`, rendered to HTML (by the build, or in dev at start). */
  readonly pages: RenderedPages;
  /** The release reported to monitoring and on /healthz. */
  readonly release: string;
  readonly monitoring: Monitoring;
  /** Pages with loaders, when there are any. */
  readonly live?: LivePages;
  /** Dev mode's answer to a loader's error (the dev error page), instead of the app's 500. */
  readonly pageError?: (error: unknown, req: Request) => Response;
}

/** Render every page once and build its `GET`/`HEAD` handler, by exact path; the 404 page, and the
 * 500 page for a loader. */
export function createPageHandlers(deps: PageDeps) {
  const { config, monitoring } = deps;
  const publicConfig = Object.keys(config.publicVariables).length > 0
    ? { public: config.publicVariables }
    : {};
  const replays = config.replaysSessionSampleRate > 0 || config.replaysOnErrorSampleRate > 0;
  // Sentry's optional products, only those turned on: with none, the page is as it was.
  const features = Object.entries({
    replaysSessionSampleRate: config.replaysSessionSampleRate,
    replaysOnErrorSampleRate: config.replaysOnErrorSampleRate,
    replayWorker: replays && deps.manifest.replayWorker,
    profilesSampleRate: config.profilesSampleRate,
    enableLogs: config.enableLogs,
    feedback: config.feedback,
  }).filter(([, value]) => value);
  const clientConfig = config.sentryDsn === undefined ? publicConfig : {
    ...publicConfig,
    sentry: {
      dsn: config.sentryDsn,
      environment: config.sentryEnvironment,
      release: deps.release,
      tracesSampleRate: config.tracesSampleRate,
      tunnel: config.tunnelPath,
      ...Object.fromEntries(features),
    },
  };
  const devScript = config.devMode ? DEV_PATHS.client : undefined;
  const reportPath = cspReports(config, deps.release)?.path;

  const shellFor = (page: Omit<RenderedPage, "appHtml">) =>
    documentShell(deps.manifest, page, { clientConfig, devScript });
  // The JS Self-Profiling API runs only in documents that ask for it.
  const profiling = config.sentryDsn !== undefined && config.profilesSampleRate > 0;
  // Through ctx.send every common header is set at once: adding them later costs Deno's fast path.
  const send = (body: AnswerBody, status: number, nonce: string, ctx?: RequestContext) => {
    const headers: Record<string, string> = {
      "content-type": "text/html; charset=utf-8",
      // The page carries per-request parts (nonce, trace), so caches must revalidate.
      "cache-control": "no-cache",
      "content-security-policy": contentSecurityPolicy(nonce, reportPath, ctx?.https),
    };
    if (profiling) headers["document-policy"] = "js-profiling";
    if (reportPath && ctx?.https) headers["reporting-endpoints"] = `csp="${reportPath}"`;
    if (config.sentryDsn && config.feedback) {
      headers["permissions-policy"] = FEEDBACK_PERMISSIONS_POLICY;
    }
    return ctx ? ctx.send(body, status, headers) : new Response(body, { status, headers });
  };
  // Untraced answers (the 404) carry no trace to continue; the 500 is sent without a context.
  const prerendered = (page: RenderedPage, status: number, traced: boolean) => {
    const shell = shellFor(page);
    return (_req?: Request, _info?: unknown, ctx?: RequestContext) => {
      const nonce = createNonce();
      const { start, end } = shell({ nonce, headTags: traced ? monitoring.traceMetaTags() : "" });
      return send(encoder.encode(start + page.appHtml + end()), status, nonce, ctx);
    };
  };
  const notFound = prerendered(deps.pages.notFound, 404, false);
  const errorPage = prerendered(deps.pages.error, 500, true);

  const NOT_FOUND = new Response(null, { status: 404 });
  const withLoader = (page: LivePage, live: LivePages): ContextHandler => {
    const shell = shellFor(page);
    return async (req, info, ctx) => {
      const data = await page.loader(req, {
        requestId: ctx.requestId,
        clientAddress: clientAddress(req, info, config.trustProxy),
        notFound: () => NOT_FOUND,
      });
      if (data === NOT_FOUND) return notFound(req, info, ctx);
      if (data instanceof Response) return data;
      const nonce = createNonce();
      const { start, end } = shell({ nonce, headTags: monitoring.traceMetaTags() });
      // Before the first byte goes out: data JSON cannot carry (a BigInt, a cycle) must throw
      // here, for the error page, not cut off a page already answered 200.
      const tail = end(data);
      const app = await live.renderStream(page.Page, data, nonce);
      const document = app.pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          start: (out) => out.enqueue(encoder.encode(start)),
          flush: (out) => out.enqueue(encoder.encode(tail)),
        }),
      );
      return send(document, 200, nonce, ctx);
    };
  };

  const pages = new Map<string, ContextHandler>();
  for (const [path, page] of deps.pages.pages) pages.set(path, prerendered(page, 200, true));
  for (const [path, page] of deps.live?.pages ?? []) pages.set(path, withLoader(page, deps.live!));
  return { pages, notFound, error: deps.pageError ?? (() => errorPage()) };
}

const encoder = new TextEncoder();
