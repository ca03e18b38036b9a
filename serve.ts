/**
 * Entry point for `deno serve`, which listens itself and, with `--parallel`, runs one copy of
 * this module per CPU core (or `DENO_JOBS`) on the same port:
 *
 *   deno task start:parallel
 *
 * Deno chooses the address (`--port`/`--host`, or `DENO_SERVE_ADDRESS=tcp:HOST:PORT`), so PORT
 * and HOST do not apply here. Each worker builds its own app (server/lifecycle/boot.ts), with its own
 * monitoring client; on SIGINT/SIGTERM each one waits for its running handlers and flushes
 * monitoring before the process exits.
 *
 * Deno's own SIGTERM handler for `deno serve` calls the server's graceful shutdown at once,
 * which (Deno 2.9) cuts request bodies still arriving: unlike main.ts, uploads in progress at
 * the signal are answered 400. An accept failure (out of file descriptors) ends the process.
 */
import "./server/lifecycle/preflight.ts";
import { createServerApp } from "./server/lifecycle/boot.ts";
import { readEnv } from "./server/lifecycle/config.ts";
import { exitOnStartupError } from "./server/lifecycle/startup_error.ts";
import { defaultLogWriter } from "./server/http/app.ts";
import { DRAIN_TIMEOUT_MS, FLUSH_TIMEOUT_MS } from "./server/constants.ts";
import { InFlight } from "./server/lifecycle/in_flight.ts";
import { withLastResort } from "./server/http/last_resort.ts";

const { config, release, monitoring, handler } = await createServerApp(readEnv())
  .catch(exitOnStartupError);

const inFlight = new InFlight();

// Every worker hears the signal. The first to call Deno.exit ends the process for all, so
// each waits out the same deadline when there may be monitoring data left to send.
let stopping = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, async () => {
    if (stopping) return;
    stopping = true;
    // This worker's requests already read (the tunnel forwarding an envelope) finish first.
    // Another worker's Deno.exit can still end them: workers do not wait for each other.
    await inFlight.idle(DRAIN_TIMEOUT_MS);
    const deadline = Date.now() + FLUSH_TIMEOUT_MS;
    await Promise.all([monitoring.flush(FLUSH_TIMEOUT_MS), defaultLogWriter().flush()]);
    if (monitoring.enabled) await new Promise((r) => setTimeout(r, deadline - Date.now()));
    Deno.exit(0);
  });
}

export default {
  // The default export has no onError: this gives the same last-resort answer as main.ts.
  fetch: withLastResort(inFlight.track(handler)),
  // Called in the first worker only.
  onListen(addr) {
    const { hostname, port } = addr as Deno.NetAddr;
    const shown = hostname === "0.0.0.0" ? "localhost" : hostname;
    console.log(`Listening on http://${shown}:${port}/ (release ${release}, deno serve)`);
    if (config.sentryDsn === undefined) {
      console.log("Monitoring is off: set SENTRY_DSN to report errors and traces to Sentry.");
    }
  },
} satisfies Deno.ServeDefaultExport;
