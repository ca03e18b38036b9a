/** Start-up for both entries: config, permission check, build, monitoring, the app's handler. */
import { createApp } from "../app.ts";
import type { Handler } from "../http/request_context.ts";
import { badSetting, loadConfig, readEnv, StartupError } from "./config.ts";
import "../settings.ts"; // read as it loads: a bad app setting stops start-up below
import { readManifest } from "../build/manifest.ts";
import type { MonitoringOptions } from "../monitoring/sentry.ts";
import { MONITORING_OFF } from "../monitoring/monitoring.ts";
import { missingPermission, runtimePermissions } from "./preflight.ts";
import { indexStaticFiles } from "../http/static_files.ts";
import { readRenderedPages, type RenderedPages } from "../page/rendered_pages.ts";
import { FLUSH_TIMEOUT_MS, QUEUE_DRAIN_MS, STATIC_DIR } from "../constants.ts";

/** What development adds (server/dev/boot.ts); declared here so production never imports a dev
 * module, not even for its types. */
export interface DevTools {
  /** Where the server SDK's envelopes go instead of the network. */
  readonly transport?: MonitoringOptions["transport"];
  tunnelFetch(upstream: typeof fetch): typeof fetch;
  readonly renderPages?: () => Promise<RenderedPages>;
  /** The dev error page for a loader that threw, in place of the app's 500 page. */
  readonly pageError?: (error: unknown, req: Request) => Response;
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
  if (badSetting) throw badSetting;
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
  // One queue for the tunnel and the server's SDK; loaded only with a DSN, as the SDK is. Its fetch
  // is taken before monitoring starts: the queue's upstream requests must not be instrumented.
  const delivery = config.tunnelAllowedDsns.length === 0
    ? undefined
    : (await import("../delivery/queue.ts")).createDeliveryQueue({
      dsns: config.tunnelAllowedDsns,
      maxBytes: config.deliveryQueueBytes,
      maxAgeMs: config.deliveryMaxAgeS * 1000,
      fetch: dev?.tunnelFetch(globalThis.fetch),
    });
  // Loaded only with a DSN: the SDK's code is several MB of resident memory.
  const monitoring = config.sentryDsn === undefined
    ? MONITORING_OFF
    : (await import("../monitoring/sentry.ts")).startMonitoring(config, release, {
      transport: dev?.transport,
      delivery,
      sentryOptions: (await import("../sentry_options.ts")).sentryOptions,
    });
  // Pages with loaders render per request: only then does React's server renderer load.
  const render = pages.live.length > 0 ? await import("../page/render.ts") : undefined;
  const live = render && render.livePages(await render.importServerBundle());
  const app = createApp({
    config,
    manifest,
    staticIndex,
    pages,
    release,
    monitoring,
    delivery,
    live,
    pageError: config.devMode ? dev?.pageError : undefined,
  });
  // At the stop signal the queue sends at once, alongside the requests' drain; once they are done
  // the SDK hands over its last events (constants.ts: the deadlines).
  const stop = (requests: Promise<unknown>) => {
    const handedOver = requests.then(() => monitoring.flush(FLUSH_TIMEOUT_MS));
    return delivery?.drain(QUEUE_DRAIN_MS, handedOver) ?? handedOver;
  };
  return { config, release, stop, handler: dev ? dev.wrap(app) : app };
}
