/**
 * The exact Deno permissions the server process needs for a configuration: listen on its
 * address, reach the Sentry hosts it forwards to, read `static/`, read its own variables.
 * No write, no run, no `--allow-all`. The same needs are checked at start-up (permissions.ts).
 * The last argument tells the server that its stdin is the launcher's lifeline (parent_gone.ts).
 */
import { type Config, SERVER_ENV_VARIABLES } from "./config.ts";
import { STDIN_LIFELINE_FLAG } from "../constants.ts";
import { netHosts } from "./permissions.ts";

/**
 * `deno run` arguments that start `entry` with least privilege.
 *
 * @example
 * servingArgs(loadConfig({ PORT: "8000" }));
 * // ["run", "--allow-net=0.0.0.0:8000", "--allow-read=static", "--allow-env=...", "main.ts",
 * //  "--until-stdin-closes"]
 */
export function servingArgs(config: Config, entry = "main.ts"): string[] {
  return [
    "run",
    `--allow-net=${netHosts(config).join(",")}`,
    "--allow-read=static",
    `--allow-env=${SERVER_ENV_VARIABLES.join(",")}`,
    entry,
    STDIN_LIFELINE_FLAG,
  ];
}
