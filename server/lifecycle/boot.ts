/** Start-up for both entries: config, permission check, build, monitoring, the app's handler. */
import { createApp } from "../app.ts";
import type { LivePages } from "../page/handler.ts";
import type { Handler } from "../http/request_context.ts";
import { loadConfig, readEnv, StartupError } from "./config.ts";
import { readManifest } from "../build/manifest.ts";
import type { startMonitoring } from "../monitoring/sentry.ts";
import { MONITORING_OFF } from "../monitoring/monitoring.ts";
import { missingPermission, runtimePermissions } from "./preflight.ts";
import { indexStaticFiles } from "../http/static_files.ts";
import { readRenderedPages, type RenderedPages } from "../page/rendered_pages.ts";
import { SERVER_BUNDLE, STATIC_DIR } from "../constants.ts";

/**
 * What development adds (server/dev/boot.ts); declared here so production never imports a dev
 * module, not even for its types.
 */
export interface DevTools {
  /** Where the server SDK's envelopes go instead of the network. */
  readonly transport?: NonNullable<Parameters<typeof startMonitoring>[2]>["transport"];
  tunnelFetch(upstream: typeof fetch): typeof fetch;
  readonly renderPages?: () => Promise<RenderedPages>;
  wrap(app: Handler): Handler;
}

// Not a string literal, so `deno info main.ts` and `deno compile` leave the dev modules out of
// the production graph; loading it needs read access to server/, which only dev grants.
const DEV_TOOLS_MODULE = new URL("../dev/boot.ts", import.meta.url).href;

/** Build the app from the environment; a {@link StartupError} names what the operator must fix. */
export async function createServerApp(env = readEnv()) {
  const config = loadConfig(env);
  const missing = missingPermission(runtimePermissions(config));
  if (missing) throw new StartupError(missing);
  const dev: DevTools | undefined = config.devMode || config.devInbox
    ? (await import(DEV_TOOLS_MODULE)).startDevTools(config)
    : undefined;
  const asStartupError = (error: Error) => {
    throw new StartupError(error.message);
  };
  const manifest = await readManifest().catch(asStartupError);
  const pages = await (dev?.renderPages?.() ?? readRenderedPages().catch(asStartupError));
  const staticIndex = await indexStaticFiles(STATIC_DIR, config);
  const release = config.sentryRelease ?? manifest.buildId;
  // Taken before monitoring starts: the queue's upstream requests must not be instrumented.
  const upstreamFetch = dev?.tunnelFetch(globalThis.fetch);
  // One queue for the tunnel and the server's SDK; loaded only with a DSN, as the SDK is.
  const delivery = config.tunnelAllowedDsns.length === 0
    ? undefined
    : (await import("../delivery/queue.ts")).createDeliveryQueue({
      dsns: config.tunnelAllowedDsns,
      maxBytes: config.deliveryQueueBytes,
      maxAgeMs: config.deliveryMaxAgeS * 1000,
      fetch: upstreamFetch,
    });
  // Loaded only with a DSN: the SDK's code is several MB of resident memory.
  const monitoring = config.sentryDsn === undefined
    ? MONITORING_OFF
    : (await import("../monitoring/sentry.ts")).startMonitoring(config, release, {
      transport: dev?.transport,
      delivery,
      sentryOptions: (await import("../sentry_options.ts")).sentryOptions,
    });
  const live = await livePages();
  const app = createApp({
    config,
    manifest,
    staticIndex,
    pages,
    release,
    monitoring,
    delivery,
    live,
  });
  // At shutdown (main.ts, serve.ts) the SDK hands its events over, then the queue sends what it
  // holds: both within twice the flush's time (4 s), inside the 5 s Deno Deploy gives.
  const flush = async (timeoutMs: number) => {
    const start = performance.now();
    const flushed = await monitoring.flush(timeoutMs);
    await delivery?.drain(2 * timeoutMs - (performance.now() - start));
    return flushed;
  };
  return {
    config,
    release,
    monitoring: { ...monitoring, flush },
    handler: dev ? dev.wrap(app) : app,
  };
}

/** Pages with loaders, rendered per request; React's server renderer loads only if one exists. */
async function livePages(): Promise<LivePages | undefined> {
  const { loaders } = await import("../loaders.ts");
  const paths = Object.keys(loaders);
  if (paths.length === 0) return undefined;
  const [{ renderPageStream }, { routes, App }] = await Promise.all([
    import("../page/render.ts"),
    import(new URL(`../../${SERVER_BUNDLE}`, import.meta.url).href),
  ]);
  const unknown = paths.find((path) => !routes.pages.has(path));
  if (unknown !== undefined) {
    throw new StartupError(
      `server/loaders.ts: ${unknown} has a loader but no page in client/routes.tsx`,
    );
  }
  return {
    loaders,
    routes,
    renderStream: (page, data, nonce) => renderPageStream(App, page, data, nonce),
  };
}
