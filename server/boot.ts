/**
 * Start-up: read the configuration, load the build, start monitoring and build the app's
 * handler. Shared by the two entries, `main.ts` (`deno run`: listens, handles signals) and
 * `serve.ts` (`deno serve --parallel`: Deno listens, one app per worker).
 */
import { createApp, type Handler } from "./app.ts";
import { type Config, loadConfig } from "./config.ts";
import { DevInbox, inboxFetch, inboxTransport } from "./dev_inbox.ts";
import { createDevHandler } from "./dev_server.ts";
import { type Manifest, readManifest } from "./manifest.ts";
import { type Monitoring, startMonitoring } from "./monitoring.ts";
import { describeMissing, firstMissing, runtimePermissions } from "./permissions.ts";
import { indexStaticFiles, type StaticIndex } from "./static_files.ts";
import { StartupError } from "./startup.ts";

/** The folder served at `/`; the build writes its output under it. */
export const STATIC_ROOT = "static";

/** A ready-to-serve app and what its entry needs to listen and shut down. */
export interface ServerApp {
  readonly config: Config;
  /** The release reported to monitoring and on /healthz. */
  readonly release: string;
  readonly monitoring: Monitoring;
  readonly handler: Handler;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The client build as the server uses it. */
interface Build {
  readonly manifest: Manifest;
  readonly staticIndex: StaticIndex;
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
  const missing = firstMissing(runtimePermissions(config, STATIC_ROOT));
  if (missing) throw new StartupError(describeMissing(missing));
  const build = await loadBuild(config);
  const release = config.sentryRelease ?? build.manifest.buildId;
  // Taken before monitoring starts: the tunnel's upstream requests must not be instrumented.
  const upstreamFetch = globalThis.fetch;
  const inbox = config.devInbox ? new DevInbox() : undefined;
  const monitoring = startMonitoring(config, release, {
    transport: inbox && inboxTransport(inbox),
  });
  const appFor = ({ manifest, staticIndex }: Build) =>
    createApp({
      config,
      manifest,
      staticIndex,
      release,
      monitoring,
      fetch: inbox ? inboxFetch(inbox, upstreamFetch) : upstreamFetch,
    });
  const handler = config.devMode || inbox
    ? await createDevHandler({
      devMode: config.devMode,
      inbox,
      app: appFor(build),
      buildId: build.manifest.buildId,
      reloadApp: async () => appFor(await loadBuild(config)),
    })
    : appFor(build);
  return { config, release, monitoring, handler };
}

/** Read the manifest and index `static/`: what a build gives the server. */
async function loadBuild(config: Config): Promise<Build> {
  const manifest = await readManifest().catch((error) => {
    throw new StartupError(error.message);
  });
  const staticIndex = await indexStaticFiles(STATIC_ROOT, {
    serveSourceMaps: config.serveSourceMaps,
  });
  return { manifest, staticIndex };
}
