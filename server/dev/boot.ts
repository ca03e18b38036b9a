/**
 * Development start-up, loaded by boot.ts only when `DEV_MODE` or `DEV_INBOX` is on (never in
 * production: those variables are not readable there). It refuses to show the inbox, which holds
 * stack traces and needs no login, on an address other machines can reach.
 */
import type { DevTools } from "../lifecycle/boot.ts";
import type { Config } from "../lifecycle/config.ts";
import { DevInbox, inboxFetch, inboxTransport } from "./inbox.ts";
import { createDevHandler } from "./handler.ts";
import { StartupError } from "../lifecycle/startup_error.ts";

/**
 * The dev inbox and `/_dev/` routes for this configuration. Throws {@link StartupError} when the
 * inbox would listen beyond this machine.
 *
 * @example
 * const dev = startDevTools(loadConfig({ DEV_MODE: "true", HOST: "127.0.0.1" }));
 */
export function startDevTools(config: Config): DevTools {
  if (config.devInbox && !isLoopbackHost(config.host)) {
    throw new StartupError(
      `DEV_INBOX: the dev inbox shows monitoring data to anyone who can reach it; listen on ` +
        `127.0.0.1 (HOST=127.0.0.1) or set DEV_INBOX=false, got HOST=${
          JSON.stringify(config.host)
        }`,
    );
  }
  const inbox = config.devInbox ? new DevInbox() : undefined;
  return {
    transport: inbox && inboxTransport(inbox),
    tunnelFetch: (upstream) => inbox ? inboxFetch(inbox, upstream) : upstream,
    wrap: (app, buildId, reloadApp) =>
      createDevHandler({ devMode: config.devMode, inbox, app, buildId, reloadApp }),
  };
}

/** Whether a listen address only accepts connections from this machine. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return bare === "localhost" || bare === "::1" || /^127(\.\d{1,3}){3}$/.test(bare);
}
