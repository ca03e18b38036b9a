/**
 * The exact Deno permissions the server process needs for a configuration: listen on its
 * address, reach the Sentry hosts it forwards to (and the outbound proxy, if one is set), read
 * `static/`, read its own variables.
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
 * V8's young generation capped at 4 MB per semi-space. Its default grows to 16 MB or more under
 * load, and a server whose requests leave almost nothing alive gains nothing from it: measured
 * with `GET /` load at 64 connections, RSS after load 159 -> ~105 MB (monitoring on), no CPU cost
 * per request outside the noise (BENCHMARKS.md, page section).
 */
export const V8_FLAGS = "--v8-flags=--max-semi-space-size=4";

/**
 * Deno arguments that start the server with least privilege.
 *
 * @example
 * servingArgs(loadConfig({ PORT: "8000" }));
 * // ["run", "--v8-flags=...", "--allow-net=0.0.0.0:8000", "--allow-read=static", "--allow-env=...", "main.ts",
 * //  "--until-stdin-closes"]
 */
export function servingArgs(
  config: Config,
  mode: ServingMode = "run",
  proxies: readonly string[] = [],
): string[] {
  const permissions = [
    `--allow-net=${netHosts(config, proxies).join(",")}`,
    "--allow-read=static",
    `--allow-env=${SERVER_ENV_VARIABLES.join(",")}`,
  ];
  if (mode === "run") return ["run", V8_FLAGS, ...permissions, "main.ts", STDIN_LIFELINE_FLAG];
  return [
    "serve",
    "--parallel",
    `--host=${formatHost(config.host)}`,
    `--port=${config.port}`,
    V8_FLAGS,
    ...permissions,
    "serve.ts",
    STDIN_LIFELINE_FLAG,
  ];
}
