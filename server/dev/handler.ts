/**
 * The app in development (`DEV_MODE=true`, set by `deno task dev`) or with the inbox on: the
 * `/_dev/` routes in front of the app, and in dev mode a new app (new manifest, re-indexed
 * static files) swapped in after every good client build. Production never builds this wrapper,
 * so its request path is unchanged.
 *
 * The `/_dev/` routes sit outside the app on purpose: they are neither traced (the inbox page
 * would fill the inbox) nor request-logged (the reload stream stays open for hours).
 */
import type { Handler } from "../http/handler.ts";
import { DEV_PATHS } from "../constants.ts";
import { serveDevClient } from "./client_script.ts";
import { createInboxPageHandler, type DevInbox } from "./inbox.ts";
import { type BuildStatus, readBuildStatus, ReloadChannel, watchBuildStatus } from "./reload.ts";
import { methodNotAllowed } from "../http/error_pages.ts";
import { isBadTarget, parseRequestTarget } from "../http/request_target.ts";
import { STOP_SIGNALS } from "../lifecycle/shutdown.ts";

/** What the dev wrapper is built from. */
export interface DevOptions {
  /** Live reload and the dev client script (`DEV_MODE`). */
  readonly devMode: boolean;
  /** The monitoring inbox, when it is on. */
  readonly inbox?: DevInbox;
  /** The app built at start-up, and its build id. */
  readonly app: Handler;
  readonly buildId: string;
  /** Build the app again from the current build output. */
  readonly reloadApp: () => Promise<Handler>;
}

/**
 * Build the development handler.
 *
 * @example
 * const handler = await createDevHandler({ devMode: true, app, buildId, reloadApp });
 */
export async function createDevHandler(options: DevOptions): Promise<Handler> {
  let app = options.app;
  // A Map, not an object: the path is the client's.
  const routes = new Map<string, Handler>();
  if (options.inbox) routes.set(DEV_PATHS.inbox, createInboxPageHandler(options.inbox));
  if (options.devMode) {
    const status = await readBuildStatus();
    const channel = new ReloadChannel({ status, buildId: options.buildId });
    routes.set(DEV_PATHS.reload, channel.handler);
    routes.set(DEV_PATHS.client, serveDevClient);
    watchBuildStatus(async (next: BuildStatus) => {
      if (next.ok) {
        try {
          app = await options.reloadApp();
        } catch (error) {
          console.error("dev: could not load the new build:", error);
          return;
        }
      }
      channel.publish(next);
    }, { lastSeq: status?.seq });
    // Open event streams would hold a graceful shutdown (main.ts) forever.
    for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, () => channel.close());
  }
  return (req, info) => {
    // A target the app would refuse (a bad Host, say) goes to the app, which answers 400.
    const target = parseRequestTarget(req.url, req.headers.get("host"));
    const route = isBadTarget(target) ? undefined : routes.get(target.path);
    if (route === undefined) return app(req, info);
    if (req.method !== "GET" && req.method !== "HEAD") return methodNotAllowed(["GET", "HEAD"]);
    return route(req, info);
  };
}
