/**
 * The Deno command line that starts the server with least privilege: listen on its address,
 * reach the Sentry hosts (and an outbound proxy), read `static/` and its own variables, plus
 * what deno.json grants the app's code (`permissions.app`). No write, no run, no `--allow-all`.
 * The launcher (`deno task start`) and the dev runner both build their server's flags here, so
 * a grant missing in production is missing in development first.
 */
import {
  type Config,
  DEV_VARIABLES,
  PUBLIC_VARIABLES_FLAG,
  SERVER_ENV_VARIABLES,
} from "./config.ts";
import { STDIN_LIFELINE_FLAG } from "../constants.ts";
import { formatHost } from "./listen_address.ts";
import { type AppPermissions, netHosts } from "./permissions.ts";

/**
 * `run`: one process on main.ts (`deno task start`); `parallel`: `deno serve --parallel` on
 * serve.ts, a worker per core (`deno task start:parallel`); `dev`: main.ts under the dev runner,
 * which also reads client/ and server/ (the dev modules) and the dev switches.
 */
export type ServingMode = "run" | "parallel" | "dev";

/**
 * V8's young generation capped at 4 MB per semi-space: its default grows to 16 MB or more under
 * load, and requests that leave almost nothing alive gain nothing from it (RSS after load about
 * a third lower, no CPU cost per request outside the noise; BENCHMARKS.md).
 */
export const V8_FLAGS = "--v8-flags=--max-semi-space-size=4";

/** What {@link servingArgs} can be given besides the configuration and the app's grants. */
export interface ServingOptions {
  readonly mode?: ServingMode;
  /** `host:port` of outbound proxies to grant (permissions.ts `proxyHosts`). */
  readonly proxies?: readonly string[];
}

/**
 * Deno arguments that start the server: the shell's own needs merged with the app's grants
 * kind by kind (an explicit `--allow-net=...` would replace a permission set's `net` entry).
 * The last argument tells the server that its stdin is its parent's lifeline (parent_gone.ts).
 *
 * @example
 * servingArgs(loadConfig({ PORT: "8000" }), { env: ["API_KEY"] });
 * // ["run", V8_FLAGS, "--allow-net=0.0.0.0:8000", "--allow-read=static",
 * //  "--allow-env=NODE_ENV,PORT,...,API_KEY", "main.ts", "--until-stdin-closes"]
 */
export function servingArgs(
  config: Config,
  app: AppPermissions = {},
  { mode = "run", proxies = [] }: ServingOptions = {},
): string[] {
  const dev = mode === "dev";
  const publicNames = Object.keys(config.publicVariables);
  const allow = (kind: keyof AppPermissions, shell: readonly string[]) => {
    const granted = app[kind];
    if (granted === true) return `--allow-${kind}`;
    return `--allow-${kind}=${[...new Set([...shell, ...granted || []])].join(",")}`;
  };
  const permissions = [
    allow("net", netHosts(config, proxies)),
    allow("read", dev ? ["static", "client", "server"] : ["static"]),
    allow("env", [
      ...SERVER_ENV_VARIABLES,
      ...dev ? DEV_VARIABLES : [],
      ...publicNames,
    ]),
  ];
  // The server may not list its environment: it is told which PUBLIC_* variables it has.
  const trailing = [
    ...publicNames.length > 0 ? [PUBLIC_VARIABLES_FLAG + publicNames.join(",")] : [],
    STDIN_LIFELINE_FLAG,
  ];
  if (mode !== "parallel") return ["run", V8_FLAGS, ...permissions, "main.ts", ...trailing];
  const address = [`--host=${formatHost(config.host)}`, `--port=${config.port}`];
  return [
    "serve",
    "--parallel",
    ...address,
    V8_FLAGS,
    ...permissions,
    "serve.ts",
    ...trailing,
  ];
}
