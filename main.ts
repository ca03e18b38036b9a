/**
 * Entry point for `deno run`: build the app, serve, and shut down cleanly.
 * (`serve.ts` is the entry for `deno serve --parallel`; both build the app in server/lifecycle/boot.ts.)
 *
 *   deno task start
 */
import "./server/lifecycle/preflight.ts";
import { createServerApp } from "./server/lifecycle/boot.ts";
import { readEnv } from "./server/lifecycle/config.ts";
import { exitOnStartupError } from "./server/lifecycle/startup_error.ts";
import { defaultLogWriter } from "./server/http/app.ts";
import {
  DEV_PATHS,
  DRAIN_TIMEOUT_MS,
  FLUSH_TIMEOUT_MS,
  STDIN_LIFELINE_FLAG,
} from "./server/constants.ts";
import { InFlight } from "./server/lifecycle/in_flight.ts";
import { listen, type Listening } from "./server/lifecycle/listen.ts";
import { explainListenError, listeningUrl } from "./server/lifecycle/listen_address.ts";
import { onStdinClosed } from "./server/lifecycle/parent_gone.ts";
import { lastResortResponse } from "./server/http/last_resort.ts";

const { config, release, monitoring, handler } = await createServerApp(readEnv())
  .catch(exitOnStartupError);

const inFlight = new InFlight();
const address = { hostname: config.host, port: config.port };
let server: Listening;
try {
  server = listen({
    ...address,
    onError: lastResortResponse,
    onListen: (addr) => {
      const url = listeningUrl(addr);
      console.log(`Listening on ${url} (release ${release})`);
      if (config.sentryDsn === undefined) {
        console.log("Monitoring is off: set SENTRY_DSN to report errors and traces to Sentry.");
      }
      if (config.devInbox) {
        console.log(`Monitoring goes to the dev inbox: ${new URL(DEV_PATHS.inbox, url)}`);
      }
    },
  }, inFlight.track(handler));
} catch (error) {
  // Port in use, an address not of this machine, a privileged port: one line, exit 1.
  exitOnStartupError(explainListenError(error, address));
}

// Finish what was accepted (uploads still arriving are read to the end and forwarded), then stop
// listening, send queued monitoring events and exit 0. server.shutdown() alone would cut the
// bodies still arriving (see server/lifecycle/in_flight.ts). Hosted platforms send SIGINT and kill the
// process a few seconds later.
let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`server: stopping (${inFlight.count} requests in flight)`);
  if (!await inFlight.idle(DRAIN_TIMEOUT_MS)) {
    console.error(`server: ${inFlight.count} requests still running at shutdown; closing them`);
  }
  const closed = new Promise((resolve) => setTimeout(resolve, FLUSH_TIMEOUT_MS));
  await Promise.race([server.shutdown(), closed]);
  await Promise.all([monitoring.flush(FLUSH_TIMEOUT_MS), defaultLogWriter().flush()]);
  Deno.exit(0);
}
for (const signal of ["SIGINT", "SIGTERM"] as const) Deno.addSignalListener(signal, stop);
if (Deno.args.includes(STDIN_LIFELINE_FLAG)) onStdinClosed(stop);
