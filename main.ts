/** Entry for `deno run` (`deno task start`); serve.ts is the `deno serve --parallel` one. */
import "./server/lifecycle/preflight.ts";
import { createServerApp } from "./server/lifecycle/boot.ts";
import { exitOnStartupError } from "./server/lifecycle/config.ts";
import { FLUSH_TIMEOUT_MS } from "./server/constants.ts";
import { InFlight, listen, type Listening } from "./server/deno_workarounds.ts";
import { explainListenError, startupBanner } from "./server/lifecycle/listen_address.ts";
import { drain, onStopRequest } from "./server/lifecycle/shutdown.ts";
import { lastResortResponse } from "./server/http/error_pages.ts";

const { config, release, stop, handler } = await createServerApp().catch(exitOnStartupError);

const inFlight = new InFlight();
const address = { hostname: config.host, port: config.port };
let server: Listening;
try {
  server = listen({
    ...address,
    onError: lastResortResponse,
    onListen: (addr) => console.log(startupBanner(addr, config, release).join("\n")),
  }, inFlight.track(handler));
} catch (error) {
  // Port in use, an address not of this machine, a privileged port: one line, exit 1.
  exitOnStartupError(explainListenError(error, address));
}

// server.shutdown() alone would cut uploads still arriving (server/deno_workarounds.ts): drain
// first, the delivery queue sending alongside.
onStopRequest(async () => {
  const closed = () => new Promise((resolve) => setTimeout(resolve, FLUSH_TIMEOUT_MS));
  await drain(inFlight, stop, () => Promise.race([server.shutdown(), closed()]));
  Deno.exit(0);
});
