/**
 * Entry for `deno serve --parallel`: one app per worker; on a stop signal each drains and flushes,
 * and the process exits once every worker has.
 */
import "./server/lifecycle/preflight.ts";
import { createServerApp } from "./server/lifecycle/boot.ts";
import { exitOnStartupError } from "./server/lifecycle/config.ts";
import { DRAIN_TIMEOUT_MS, FLUSH_TIMEOUT_MS } from "./server/constants.ts";
import { holdServeShutdown, InFlight } from "./server/deno_workarounds.ts";
import { withLastResort } from "./server/http/error_pages.ts";
import { startupBanner } from "./server/lifecycle/listen_address.ts";
import { drain, joinWorkers, onStopRequest, STOP_SIGNALS } from "./server/lifecycle/shutdown.ts";

const { config, release, stop, handler } = await createServerApp().catch(exitOnStartupError);

const inFlight = new InFlight();
const workers = joinWorkers();

onStopRequest(async () => {
  await drain(inFlight, stop, () => denoShutdown.release());
  // Deno.exit ends every worker: wait for all, or for the longest they may take should one die.
  setTimeout(() => Deno.exit(0), DRAIN_TIMEOUT_MS + FLUSH_TIMEOUT_MS);
  await workers.finished();
  Deno.exit(0);
});
// Registered after ours, so Deno's listener is the one held.
const denoShutdown = holdServeShutdown(STOP_SIGNALS);
// One line per worker: from here on a signal drains it (only the first worker prints the URL).
console.log("server: worker ready");

export default {
  // The default export has no onError: this gives the same last-resort answer as main.ts.
  fetch: withLastResort(inFlight.track(handler)),
  // Called in the first worker only.
  onListen(addr) {
    console.log(startupBanner(addr as Deno.NetAddr, config, release, "deno serve").join("\n"));
  },
} satisfies Deno.ServeDefaultExport;
