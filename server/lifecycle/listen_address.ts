/** The listen address for people: the banner once listening, one line when listening fails. */
import { DEV_PATHS } from "../constants.ts";
import { type Config, StartupError } from "./config.ts";

/** The address the server tried to listen on. */
type ListenAddress = Pick<Deno.NetAddr, "hostname" | "port">;

/** For a listen failure a user causes, a {@link StartupError} naming the variable; else `error`. */
export function explainListenError(error: unknown, { hostname, port }: ListenAddress): unknown {
  let reason: string | undefined;
  if (error instanceof Deno.errors.AddrInUse) {
    reason = `PORT: ${port} is already in use on ${hostname} (another process listens on it); ` +
      `stop that process or set PORT to a free port`;
  } else if (error instanceof Deno.errors.AddrNotAvailable) {
    reason = `HOST: ${hostname} is not an address of this machine; expected one of its own ` +
      `addresses, 0.0.0.0 (all IPv4) or :: (all IPv6)`;
  } else if (error instanceof Deno.errors.PermissionDenied) {
    reason = `PORT: the system does not allow this process to listen on port ${port} (ports ` +
      `below 1024 need root or CAP_NET_BIND_SERVICE); set PORT to 1024 or above`;
  } else if (error instanceof Deno.errors.NotCapable) {
    reason = `missing permission --allow-net=${formatHost(hostname)}:${port} ` +
      `(needed to listen for requests)`;
  } else if (error instanceof Error && /failed to lookup address/i.test(error.message)) {
    // Deno has no error class for a failed name lookup; its message is stable since 1.x.
    reason = `HOST: cannot resolve ${JSON.stringify(hostname)}; expected an IP address of this ` +
      `machine or a name that resolves to one`;
  }
  return reason === undefined ? error : new StartupError(reason);
}

/** A host as it appears before `:port`: IPv6 addresses in brackets. */
export function formatHost(hostname: string): string {
  return hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
}

/** The URL to print once listening: wildcard addresses as `localhost`, IPv6 in brackets. */
export function listeningUrl({ hostname, port }: ListenAddress): string {
  const shown = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : formatHost(hostname);
  return `http://${shown}:${port}/`;
}

/** What both entries print once listening: where, the release, which Sentry (never the key). */
export function startupBanner(addr: ListenAddress, config: Config, release: string, how = "") {
  const url = listeningUrl(addr);
  const lines = [`Listening on ${url} (release ${release}${how ? `, ${how}` : ""})`];
  const own = config.tunnelAllowedDsns[0];
  if (config.sentryDsn === undefined) {
    lines.push("Monitoring is off: set SENTRY_DSN to report errors and traces to Sentry.");
  } else if (config.devInbox) {
    lines.push(`Monitoring goes to the dev inbox: ${new URL(DEV_PATHS.inbox, url)}`);
  } else {
    const percent = Math.round(config.tracesSampleRate * 1000) / 10;
    lines.push(
      `Monitoring is on: errors and ${percent}% of page requests traced go to Sentry at ` +
        `${own.hostname}, project ${own.projectId}, environment ${config.sentryEnvironment}.`,
    );
  }
  // Django's ALLOWED_HOSTS, but unset is "any": a first run and a fresh deploy must answer.
  if (!config.allowedHosts && !config.devMode) {
    lines.push("Any Host is answered: set ALLOWED_HOSTS to this app's host names in production.");
  }
  return lines;
}
