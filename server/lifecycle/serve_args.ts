/**
 * The exact Deno permissions the server process needs for a configuration: listen on its
 * address, reach the Sentry hosts it forwards to, read `static/`, read its own variables.
 * No write, no run, no `--allow-all`. The same needs are checked at start-up (permissions.ts).
 * The last argument tells the server that its stdin is the launcher's lifeline (parent_gone.ts).
 */
import { type Config, SERVER_ENV_VARIABLES } from "./config.ts";
import { STDIN_LIFELINE_FLAG } from "../constants.ts";
import { formatHost } from "./listen_address.ts";
import { netHosts } from "./permissions.ts";

/**
 * How the server runs: `run` is one process on main.ts (`deno task start`); `parallel` is
 * `deno serve --parallel` on serve.ts, one worker per core or `DENO_JOBS` on the same port
 * (`deno task start:parallel`), listening on the configuration's HOST and PORT.
 */
export type ServingMode = "run" | "parallel";

/**
 * Deno arguments that start the server with least privilege.
 *
 * @example
 * servingArgs(loadConfig({ PORT: "8000" }));
 * // ["run", "--allow-net=0.0.0.0:8000", "--allow-read=static", "--allow-env=...", "main.ts",
 * //  "--until-stdin-closes"]
 */
export function servingArgs(config: Config, mode: ServingMode = "run"): string[] {
  const permissions = [
    `--allow-net=${netHosts(config).join(",")}`,
    "--allow-read=static",
    `--allow-env=${SERVER_ENV_VARIABLES.join(",")}`,
  ];
  if (mode === "run") return ["run", ...permissions, "main.ts", STDIN_LIFELINE_FLAG];
  return [
    "serve",
    "--parallel",
    `--host=${formatHost(config.host)}`,
    `--port=${config.port}`,
    ...permissions,
    "serve.ts",
    STDIN_LIFELINE_FLAG,
  ];
}
