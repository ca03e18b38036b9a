/**
 * Entry point for `deno run`: build the app, serve, and shut down cleanly.
 * (`serve.ts` is the entry for `deno serve --parallel`; both build the app in server/boot.ts.)
 *
 *   deno task start
 */
import "./server/preflight.ts";
import { createServerApp } from "./server/boot.ts";
import { readEnv } from "./server/config.ts";
import { exitOnStartupError } from "./server/startup.ts";
import { defaultLogWriter } from "./server/app.ts";
import { DEV_PATHS, FLUSH_TIMEOUT_MS } from "./server/constants.ts";
import { lastResortResponse } from "./server/last_resort.ts";

const { config, release, monitoring, handler } = await createServerApp(readEnv())
  .catch(exitOnStartupError);

const server = Deno.serve({
  port: config.port,
  hostname: config.host,
  onError: lastResortResponse,
  onListen: ({ hostname, port }) => {
    const shown = hostname === "0.0.0.0" ? "localhost" : hostname;
    console.log(`Listening on http://${shown}:${port}/ (release ${release})`);
    if (config.sentryDsn === undefined) {
      console.log("Monitoring is off: set SENTRY_DSN to report errors and traces to Sentry.");
    }
    if (config.devInbox) {
      console.log(`Monitoring goes to the dev inbox: http://${shown}:${port}${DEV_PATHS.inbox}`);
    }
  },
}, handler);

// Stop accepting, let in-flight requests finish, send queued monitoring events, exit 0.
// Hosted platforms send SIGINT and kill the process a few seconds later.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    if (stopping) return;
    stopping = true;
    await server.shutdown();
    await Promise.all([monitoring.flush(FLUSH_TIMEOUT_MS), defaultLogWriter().flush()]);
    Deno.exit(0);
  });
}
