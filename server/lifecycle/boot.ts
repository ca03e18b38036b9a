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
 * What development adds (server/dev/boot.ts): the inbox in place of Sentry and the `/_dev/`
 * routes. Declared here so production never imports a dev module, not even for its types.
 */
export interface DevTools {
  /** Where the server SDK's envelopes go instead of the network. */
  readonly transport?: NonNullable<Parameters<typeof startMonitoring>[2]>["transport"];
  /** The tunnel's upstream fetch, given the real one. */
  tunnelFetch(upstream: typeof fetch): typeof fetch;
  /** Put the `/_dev/` routes in front of the app (and swap in new builds in dev mode). */
  wrap(app: Handler, buildId: string, reloadApp: () => Promise<Handler>): Promise<Handler>;
}

// Not a string literal, so `deno info main.ts` and `deno compile` leave the dev modules out of
// the production graph; loading it needs read access to server/, which only dev grants.
const DEV_TOOLS_MODULE = new URL("../dev/boot.ts", import.meta.url).href;
// The same for React and the app's components: production reads the pages the build rendered.
const RENDER_MODULE = new URL("../page/render.ts", import.meta.url).href;
const ROUTES_MODULE = new URL("../../client/routes.tsx", import.meta.url).href;

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
  const build = await loadBuild(config);
  const release = config.sentryRelease ?? build.manifest.buildId;
  const dev = config.devMode || config.devInbox ? await loadDevTools(config) : undefined;
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
  const appFor = ({ manifest, staticIndex, pages }: Build) =>
    createApp({ config, manifest, staticIndex, pages, release, monitoring, fetch: upstreamFetch });
  const handler = dev
    ? await dev.wrap(
      appFor(build),
      build.manifest.buildId,
      async () => appFor(await loadBuild(config)),
    )
    : appFor(build);
  return { config, release, monitoring, handler };
}

async function loadDevTools(config: Config): Promise<DevTools> {
  const { startDevTools } = await import(DEV_TOOLS_MODULE);
  return (startDevTools as (config: Config) => DevTools)(config);
}

/**
 * Read the manifest, the pages and index `static/`: what a build gives the server. In dev mode
 * the pages are rendered here instead (the dev build does not render them), so a change to a
 * page shows at the next restart, and a render error shows in the runner's error page.
 */
async function loadBuild(config: Config): Promise<Build> {
  const asStartupError = (error: Error) => {
    throw new StartupError(error.message);
  };
  const manifest = await readManifest().catch(asStartupError);
  // A render error keeps its stack: the runner shows its file and line.
  const pages = config.devMode
    ? await renderInProcess()
    : await readRenderedPages().catch(asStartupError);
  const staticIndex = await indexStaticFiles(STATIC_DIR, {
    serveSourceMaps: config.serveSourceMaps,
  });
  return { manifest, staticIndex, pages };
}

async function renderInProcess(): Promise<RenderedPages> {
  const [{ renderPages }, { routes }] = await Promise.all([
    import(RENDER_MODULE),
    import(ROUTES_MODULE),
  ]);
  return renderPages(routes);
}
