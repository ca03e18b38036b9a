/**
 * Start-up: read the configuration, load the build, start monitoring and build the app's
 * handler. Shared by the two entries, `main.ts` (`deno run`: listens, handles signals) and
 * `serve.ts` (`deno serve --parallel`: Deno listens, one app per worker).
 */
import { createApp } from "../http/app.ts";
import type { Handler } from "../http/handler.ts";
import { type Config, loadConfig } from "./config.ts";
import { type Manifest, readManifest } from "../build/manifest.ts";
import type { startMonitoring } from "../monitoring/sentry.ts";
import { type Monitoring, MONITORING_OFF } from "../monitoring/monitoring.ts";
import { missingPermission, runtimePermissions } from "./permissions.ts";
import { indexStaticFiles, type StaticIndex } from "../http/static_files.ts";
import { StartupError } from "./startup_error.ts";
import { readRenderedPages, type RenderedPages } from "../page/rendered_pages.ts";
import { STATIC_DIR } from "../constants.ts";

/** A ready-to-serve app and what its entry needs to listen and shut down. */
export interface ServerApp {
  readonly config: Config;
  /** The release reported to monitoring and on /healthz. */
  readonly release: string;
  readonly monitoring: Monitoring;
  readonly handler: Handler;
}

type Env = Readonly<Record<string, string | undefined>>;

/**
 * What development adds (server/dev/boot.ts): the inbox in place of Sentry, the `/_dev/` routes
 * and, in dev mode, the pages rendered at start. Declared here so production never imports a
 * dev module, not even for its types.
 */
export interface DevTools {
  /** Where the server SDK's envelopes go instead of the network. */
  readonly transport?: NonNullable<Parameters<typeof startMonitoring>[2]>["transport"];
  /** The tunnel's upstream fetch, given the real one. */
  tunnelFetch(upstream: typeof fetch): typeof fetch;
  /** Dev mode: render the pages now, each on its own (a page that throws shows its error). */
  readonly renderPages?: () => Promise<RenderedPages>;
  /** Put the `/_dev/` routes in front of the app. */
  wrap(app: Handler): Handler;
}

// Not a string literal, so `deno info main.ts` and `deno compile` leave the dev modules out of
// the production graph; loading it needs read access to server/, which only dev grants.
const DEV_TOOLS_MODULE = new URL("../dev/boot.ts", import.meta.url).href;

/** The client build as the server uses it. */
interface Build {
  readonly manifest: Manifest;
  readonly staticIndex: StaticIndex;
  readonly pages: RenderedPages;
}

/**
 * Build the app from environment variables (as {@link readEnv} returns them).
 * Throws {@link ConfigError} or {@link StartupError} for what the operator must fix.
 *
 * @example
 * const app = await createServerApp(readEnv());
 * Deno.serve({ port: app.config.port }, app.handler);
 */
export async function createServerApp(env: Env): Promise<ServerApp> {
  const config = loadConfig(env);
  const missing = missingPermission(runtimePermissions(config, STATIC_DIR));
  if (missing) throw new StartupError(missing);
  const dev = config.devMode || config.devInbox ? await loadDevTools(config) : undefined;
  const build = await loadBuild(config, dev);
  const release = config.sentryRelease ?? build.manifest.buildId;
  // Taken before monitoring starts: the tunnel's upstream requests must not be instrumented.
  // Without dev tools the tunnel uses the platform's fetch as it was when the tunnel loaded.
  const upstreamFetch = dev ? dev.tunnelFetch(globalThis.fetch) : undefined;
  // Loaded only with a DSN: the SDK's code is several MB of resident memory.
  const monitoring = config.sentryDsn === undefined
    ? MONITORING_OFF
    : (await import("../monitoring/sentry.ts")).startMonitoring(config, release, {
      transport: dev?.transport,
      sentryOptions: (await import("../sentry_options.ts")).sentryOptions,
    });
  const app = createApp({ config, ...build, release, monitoring, fetch: upstreamFetch });
  const handler = dev ? dev.wrap(app) : app;
  return { config, release, monitoring, handler };
}

async function loadDevTools(config: Config): Promise<DevTools> {
  const { startDevTools } = await import(DEV_TOOLS_MODULE);
  return (startDevTools as (config: Config) => DevTools)(config);
}

/**
 * Read the manifest, the pages and index `static/`: what a build gives the server. In dev mode
 * the dev tools render the pages instead (the dev build does not), at each restart.
 */
async function loadBuild(config: Config, dev?: DevTools): Promise<Build> {
  const asStartupError = (error: Error) => {
    throw new StartupError(error.message);
  };
  const manifest = await readManifest().catch(asStartupError);
  const pages = dev?.renderPages
    ? await dev.renderPages()
    : await readRenderedPages().catch(asStartupError);
  const staticIndex = await indexStaticFiles(STATIC_DIR, {
    serveSourceMaps: config.serveSourceMaps,
  });
  return { manifest, staticIndex, pages };
}
