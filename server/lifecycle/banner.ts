/**
 * What a server prints once it listens: where, which release, and whether monitoring is on.
 * Both entries print it, so a newcomer's first run says the same thing either way.
 */
import { DEV_PATHS } from "../constants.ts";
import type { Config } from "./config.ts";
import { listeningUrl } from "./listen_address.ts";

/**
 * The start-up lines for a server listening on `addr`.
 *
 * @example
 * for (const line of startupBanner(addr, config, release)) console.log(line);
 */
export function startupBanner(
  addr: Deno.NetAddr,
  config: Pick<
    Config,
    "sentryDsn" | "devInbox" | "tunnelAllowedDsns" | "tracesSampleRate" | "sentryEnvironment"
  >,
  release: string,
  how = "",
): string[] {
  const url = listeningUrl(addr);
  const lines = [`Listening on ${url} (release ${release}${how ? `, ${how}` : ""})`];
  const own = config.tunnelAllowedDsns[0];
  if (config.sentryDsn === undefined) {
    lines.push("Monitoring is off: set SENTRY_DSN to report errors and traces to Sentry.");
  } else if (config.devInbox) {
    lines.push(`Monitoring goes to the dev inbox: ${new URL(DEV_PATHS.inbox, url)}`);
  } else if (own !== undefined) {
    // Where, and how much: the host and project say which Sentry, never the key.
    const percent = Math.round(config.tracesSampleRate * 1000) / 10;
    lines.push(
      `Monitoring is on: errors and ${percent}% of page requests traced go to Sentry at ` +
        `${own.hostname}, project ${own.projectId}, environment ${config.sentryEnvironment}.`,
    );
  }
  return lines;
}
