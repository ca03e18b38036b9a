/**
 * Entry point for `deno run`: build the app, serve, and shut down cleanly.
 * (`serve.ts` is the entry for `deno serve --parallel`; both build the app in
 * server/lifecycle/boot.ts.)
 *
 *   deno task start
 */
import "./server/lifecycle/preflight.ts";
import { createServerApp } from "./server/lifecycle/boot.ts";
import { readEnv } from "./server/lifecycle/config.ts";
import { exitOnStartupError } from "./server/lifecycle/startup_error.ts";
import { flushLogs } from "./server/http/request_log.ts";
import { defaultFailureLog } from "./server/http/failure_log.ts";
import { FLUSH_TIMEOUT_MS } from "./server/constants.ts";
import { InFlight, listen, type Listening } from "./server/deno_workarounds.ts";
import { explainListenError } from "./server/lifecycle/listen_address.ts";
import { startupBanner } from "./server/lifecycle/banner.ts";
import { drain, onStopRequest } from "./server/lifecycle/shutdown.ts";
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
      for (const line of startupBanner(addr, config, release)) console.log(line);
    },
  }, inFlight.track(handler));
} catch (error) {
  // Port in use, an address not of this machine, a privileged port: one line, exit 1.
  exitOnStartupError(explainListenError(error, address));
}

// Finish what was accepted (uploads still arriving are read to the end and forwarded), then stop
// listening, send queued monitoring events and exit 0. server.shutdown() alone would cut the
// bodies still arriving (see server/deno_workarounds.ts). Hosted platforms send SIGINT and kill the
// process a few seconds later.
onStopRequest(async () => {
  await drain(inFlight);
  const closed = new Promise((resolve) => setTimeout(resolve, FLUSH_TIMEOUT_MS));
  await Promise.race([server.shutdown(), closed]);
  defaultFailureLog().flush();
  await Promise.all([monitoring.flush(FLUSH_TIMEOUT_MS), flushLogs(FLUSH_TIMEOUT_MS)]);
  Deno.exit(0);
});
