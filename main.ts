/**
 * Entry point: read the configuration, load the build, serve, and shut down cleanly.
 *
 *   deno task start
 */
import { createApp } from "./server/app.ts";
import { type Config, CONFIG_VARIABLES, ConfigError, loadConfig } from "./server/config.ts";
import { FLUSH_TIMEOUT_MS } from "./server/constants.ts";
import { readManifest } from "./server/manifest.ts";
import { startMonitoring } from "./server/monitoring.ts";
import { indexStaticFiles } from "./server/static_files.ts";

const config = readConfigOrExit();
const manifest = await readManifest().catch(exitWith);
const staticIndex = await indexStaticFiles("static", { serveSourceMaps: config.serveSourceMaps });
const release = config.sentryRelease ?? manifest.buildId;
// Taken before monitoring starts: the tunnel's upstream requests must not be instrumented.
const upstreamFetch = globalThis.fetch;
const monitoring = startMonitoring(config, release);

const server = Deno.serve({
  port: config.port,
  hostname: config.host,
  onListen: ({ hostname, port }) => {
    const shown = hostname === "0.0.0.0" ? "localhost" : hostname;
    console.log(`Listening on http://${shown}:${port}/ (release ${release})`);
    if (config.sentryDsn === undefined) {
      console.log("Monitoring is off: set SENTRY_DSN to report errors and traces to Sentry.");
    }
  },
}, createApp({ config, manifest, staticIndex, release, monitoring, fetch: upstreamFetch }));

// Stop accepting, let in-flight requests finish, send queued monitoring events, exit 0.
// Hosted platforms send SIGINT and kill the process a few seconds later.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    if (stopping) return;
    stopping = true;
    await server.shutdown();
    await monitoring.flush(FLUSH_TIMEOUT_MS);
    Deno.exit(0);
  });
}

function readConfigOrExit(): Config {
  const env = Object.fromEntries(CONFIG_VARIABLES.map((name) => [name, Deno.env.get(name)]));
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) exitWith(error);
    throw error;
  }
}

function exitWith(error: Error): never {
  console.error(`error: ${error.message}`);
  Deno.exit(1);
}
