/** The least-privilege Deno command line for the server, shared by the launcher and the dev runner
 * so a grant missing in production is missing in dev. No write, no run, no `--allow-all`. */
import {
  type Config,
  ConfigError,
  DEV_VARIABLES,
  PUBLIC_VARIABLES_FLAG,
  SERVER_ENV_VARIABLES,
} from "./config.ts";
import { STDIN_LIFELINE_FLAG } from "../constants.ts";
import { formatHost } from "./listen_address.ts";

/** V8's young generation capped at 4 MB per semi-space; the default grows past 16 MB under load. */
export const V8_FLAGS = "--v8-flags=--max-semi-space-size=4";

/** `host:port` to listen on, then each Sentry host, then each proxy. The own DSN is granted without
 * its default port: Deno grants a port-less query only for a port-less grant (which covers all). */
export function netHosts(config: Config, proxies: readonly string[] = []): string[] {
  const ingests = config.tunnelAllowedDsns.map((dsn) => `${dsn.hostname}:${dsn.port}`);
  if (config.sentryDsn !== undefined) ingests.unshift(new URL(config.sentryDsn).host);
  const bare = new Set(ingests.filter((ingest) => !/:\d+$/.test(ingest)));
  const needed = ingests.filter((i) => bare.has(i) || !bare.has(i.replace(/:\d+$/, "")));
  return [...new Set([`${formatHost(config.host)}:${config.port}`, ...needed, ...proxies])];
}

/** `host:port` of each outbound proxy `env` sets (without a scheme a proxy is http, as Deno reads
 * it). Deno 2.9's fetch checks only the ingest; this is for one that checks the proxy too. */
export function proxyHosts(env: Readonly<Record<string, string | undefined>>): string[] {
  const hosts = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"].flatMap((name) => {
    const value = env[name]?.trim();
    const url = value ? URL.parse(value.includes("://") ? value : `http://${value}`) : null;
    if (!url?.hostname) return [];
    return [`${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`];
  });
  return [...new Set(hosts)];
}

// Deno's permission-set kinds but `all`: least privilege, each granted on its own.
const KINDS = ["net", "env", "read", "write", "sys", "run", "ffi", "import"] as const;
type Kind = (typeof KINDS)[number];

/** What deno.json grants the app's own code, by kind: a list of values, or `true` for all. */
export type AppPermissions = Partial<Record<Kind, readonly string[] | boolean>>;

/** `permissions.app` of a deno.json's text (Deno's permission-set schema), validated; `{}` when it
 * has none. A value that cannot be granted throws a {@link ConfigError} naming the key. */
export function parseAppPermissions(denoJson: string): AppPermissions {
  let app: unknown;
  try {
    app = JSON.parse(denoJson).permissions?.app ?? {};
  } catch {
    // Deno reads deno.json as JSONC; a launcher that reads it too must be given plain JSON.
    throw new ConfigError("deno.json: expected JSON without comments (the launcher reads it)");
  }
  const fail = (key: string, what: string) => {
    throw new ConfigError(`permissions.app${key} in deno.json: expected ${what}`);
  };
  if (typeof app !== "object" || app === null || Array.isArray(app)) fail("", "an object");
  for (const [kind, value] of Object.entries(app as object)) {
    if (!KINDS.includes(kind as Kind)) fail(`.${kind}`, `one of ${KINDS.join(", ")}`);
    // A comma would end the value early in Deno's --allow-* list.
    const listed = Array.isArray(value) &&
      value.every((v) => typeof v === "string" && v !== "" && !v.includes(","));
    if (!listed && typeof value !== "boolean") {
      fail(`.${kind}`, `a list of strings without commas, or true, got ${JSON.stringify(value)}`);
    }
  }
  return app as AppPermissions;
}

/** deno.json's `permissions.app` in the current folder (the project's, under `deno task`). */
export async function readAppPermissions(path = "deno.json"): Promise<AppPermissions> {
  return parseAppPermissions(await Deno.readTextFile(path));
}

/** Deno arguments that start the server: `run` (main.ts), `parallel` (serve.ts), `dev` (main.ts
 * plus read access to client/, server/ and the dev switches). App grants merge per kind: an
 * explicit `--allow-net=...` would replace a permission set's `net`. */
export function servingArgs(
  config: Config,
  app: AppPermissions = {},
  { mode = "run", proxies = [], settings = [] }: {
    readonly mode?: "run" | "parallel" | "dev";
    /** `host:port` of outbound proxies to grant ({@link proxyHosts}). */
    readonly proxies?: readonly string[];
    /** The variables of the app's settings (server/settings.ts), granted by name. */
    readonly settings?: readonly string[];
  } = {},
): string[] {
  const dev = mode === "dev";
  const publicNames = Object.keys(config.publicVariables);
  const named = [...publicNames, ...settings];
  const allow = (kind: Kind, shell: readonly string[] = []) => {
    const granted = app[kind];
    if (granted === true) return [`--allow-${kind}`];
    const values = [...new Set([...shell, ...granted || []])];
    return values.length ? [`--allow-${kind}=${values}`] : [];
  };
  const flags = [
    V8_FLAGS,
    ...allow("net", netHosts(config, proxies)),
    ...allow("read", dev ? ["static", "client", "server"] : ["static"]),
    ...allow("env", [...SERVER_ENV_VARIABLES, ...dev ? DEV_VARIABLES : [], ...named]),
    ...KINDS.slice(3).flatMap((kind) => allow(kind)),
  ];
  // The server may not list its environment: it is told which PUBLIC_* variables it has.
  const trailing = [
    ...publicNames.length > 0 ? [PUBLIC_VARIABLES_FLAG + publicNames.join(",")] : [],
    STDIN_LIFELINE_FLAG,
  ];
  if (mode !== "parallel") return ["run", ...flags, "main.ts", ...trailing];
  const address = [`--host=${formatHost(config.host)}`, `--port=${config.port}`];
  return ["serve", "--parallel", ...address, ...flags, "serve.ts", ...trailing];
}
