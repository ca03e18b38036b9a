/**
 * Dev additions, loaded only when `DEV_MODE` or `DEV_INBOX` is on: the inbox, live reload, pages
 * rendered at start. The inbox shows stack traces without a login, so it refuses a public address.
 */
import type { DevTools } from "../lifecycle/boot.ts";
import { type Config, StartupError } from "../lifecycle/config.ts";
import type { RenderedPages } from "../page/rendered_pages.ts";
import { DEV_PATHS } from "../constants.ts";
import { DevInbox, inboxFetch, inboxPage, inboxTransport } from "./inbox.ts";
import { errorResponse, type Failure, locate } from "./error_page.ts";
import { liveReload } from "./live_reload.ts";
import { plainError } from "../http/error_pages.ts";
import { requestHost } from "../http/request_target.ts";

const ROOT = new URL("../../", import.meta.url).href;

/** The dev tools; throws a {@link StartupError} if the inbox would listen beyond this machine. */
export function startDevTools(config: Config): DevTools {
  if (config.devInbox && !isLoopbackHost(config.host)) {
    const host = JSON.stringify(config.host);
    throw new StartupError(
      `DEV_INBOX: the dev inbox shows monitoring data to anyone who can reach it; listen on ` +
        `127.0.0.1 (HOST=127.0.0.1) or set DEV_INBOX=false, got HOST=${host}`,
    );
  }
  const inbox = config.devInbox ? new DevInbox() : undefined;
  const reload = config.devMode ? liveReload(crypto.randomUUID()) : () => undefined;
  const failedPages = new Map<string, Failure>();
  return {
    transport: inbox && inboxTransport(inbox),
    tunnelFetch: (upstream) =>
      inbox ? inboxFetch(inbox, upstream, config.tunnelMaxBodyBytes) : upstream,
    renderPages: config.devMode ? () => renderDevPages(failedPages) : undefined,
    pageError: (error, req) =>
      errorResponse(req, failure(`Loading ${new URL(req.url).pathname} failed`, error)),
    // In front of the app, so neither traced (the inbox would fill itself) nor request-logged
    // (the reload stream stays open for hours).
    wrap: (app) => (req, info) => {
      // Dev pages show stack traces and monitoring data: not to a site that rebinds its name here.
      const host = requestHost(req.url);
      if (!isLoopbackHost(host) && !config.allowedHosts?.includes(host)) {
        return plainError(421, "the dev server answers for localhost only (or ALLOWED_HOSTS)");
      }
      const path = new URL(req.url).pathname;
      if (inbox && path === DEV_PATHS.inbox) return inboxPage(inbox);
      const failure = failedPages.get(path);
      return reload(req) ?? (failure ? errorResponse(req, failure) : app(req, info));
    },
  };
}

// Not imported above: the inbox alone (DEV_INBOX without DEV_MODE) never loads React.
async function renderDevPages(failed: Map<string, Failure>): Promise<RenderedPages> {
  const { importServerBundle, renderPages } = await import("../page/render.ts");
  return renderPages(await importServerBundle(), (path, error) => {
    failed.set(path, failure(`Rendering ${path} failed`, error));
  });
}

// What the error page shows, said on the console too: "dev: Loading /x failed at ...".
function failure(title: string, error: unknown): Failure {
  const { text, where } = locate(error instanceof Error ? error.stack! : String(error), ROOT);
  console.error(`dev: ${title}${where ? ` at ${where}` : ""}:`, error);
  return { title, where, detail: text };
}

/** Whether a listen address only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}
