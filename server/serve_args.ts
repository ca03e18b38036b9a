/**
 * The exact Deno permissions the server process needs for a configuration: listen on its
 * address, reach the Sentry hosts it forwards to, read `static/`, read its own variables.
 * No write, no run, no `--allow-all`.
 */
import { type Config, CONFIG_VARIABLES } from "./config.ts";

/** Every variable the server reads: its configuration, plus NODE_ENV (read by React). */
export const SERVER_ENV_VARIABLES: readonly string[] = ["NODE_ENV", ...CONFIG_VARIABLES];

/**
 * `deno run` arguments that start `entry` with least privilege.
 *
 * @example
 * servingArgs(loadConfig({ PORT: "8000" }));
 * // ["run", "--allow-net=0.0.0.0:8000", "--allow-read=static", "--allow-env=...", "main.ts"]
 */
export function servingArgs(config: Config, entry = "main.ts"): string[] {
  const hosts = new Set([`${hostForFlag(config.host)}:${config.port}`]);
  for (const dsn of config.tunnelAllowedDsns) hosts.add(`${dsn.hostname}:${dsn.port}`);
  return [
    "run",
    `--allow-net=${[...hosts].join(",")}`,
    "--allow-read=static",
    `--allow-env=${SERVER_ENV_VARIABLES.join(",")}`,
    entry,
  ];
}

// An IPv6 listen address needs brackets to be told apart from its port.
function hostForFlag(host: string): string {
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}
