/**
 * The Deno permissions of the server: what the shell itself needs (checked at start-up, so a
 * missing grant stops it with one line naming the flag instead of failing on a request), and
 * what the app's own code is granted in deno.json (`permissions.app`, Deno's permission-set
 * schema), which the launcher and the dev runner add on top (serve_args.ts).
 */
import { type Config, ConfigError, PROXY_VARIABLES, SERVER_ENV_VARIABLES } from "./config.ts";
import { formatHost } from "./listen_address.ts";

/** One permission the server needs: its descriptor, the flag that grants it, and why. */
export interface Need {
  readonly descriptor: Deno.PermissionDescriptor;
  readonly flag: string;
  readonly why: string;
}

/** Env access for every configuration variable: checked before the configuration is read. */
export function envPermissions(): Need[] {
  return SERVER_ENV_VARIABLES.map((variable) => need("env", variable, "to read the configuration"));
}

/** What serving needs for this configuration: the static folder, listening, the ingests. */
export function runtimePermissions(config: Config, staticDir: string): Need[] {
  const [listen, ...ingests] = netHosts(config);
  return [
    need("read", staticDir, "to serve static files and read the build manifest"),
    need("net", listen, "to listen for requests"),
    ...ingests.map((host) => need("net", host, "to send monitoring data to Sentry")),
  ];
}

function need(name: "env" | "read" | "net", value: string, why: string): Need {
  const key = { env: "variable", read: "path", net: "host" }[name];
  const descriptor = { name, [key]: value } as Deno.PermissionDescriptor;
  return { descriptor, flag: `--allow-${name}=${value}`, why };
}

/** The one line for the first need not granted, or `undefined` when all are. */
export function missingPermission(needs: readonly Need[]): string | undefined {
  const need = needs.find((n) => Deno.permissions.querySync(n.descriptor).state !== "granted");
  return need && `missing permission ${need.flag} (needed ${need.why})`;
}

/**
 * `host:port` the server listens on, then each Sentry host it reaches, then each outbound proxy
 * (no repeats). The own DSN is granted as `URL.host`, without the scheme's default port: Deno
 * grants a port-less query only for a port-less grant, and a port-less grant covers every port.
 */
export function netHosts(config: Config, proxies: readonly string[] = []): string[] {
  const ingests = config.tunnelAllowedDsns.map((dsn) => `${dsn.hostname}:${dsn.port}`);
  if (config.sentryDsn !== undefined) ingests.unshift(new URL(config.sentryDsn).host);
  const bare = new Set(ingests.filter((ingest) => !/:\d+$/.test(ingest)));
  const needed = ingests.filter((i) => bare.has(i) || !bare.has(i.replace(/:\d+$/, "")));
  return [...new Set([`${formatHost(config.host)}:${config.port}`, ...needed, ...proxies])];
}

/**
 * `host:port` of each outbound proxy `env` sets; without a scheme a proxy is http, as Deno reads
 * it. Deno 2.9's fetch checks --allow-net against the ingest only; this is for one that checks
 * the connection it opens as well.
 *
 * @example
 * proxyHosts({ HTTPS_PROXY: "http://proxy.internal:3128" }); // ["proxy.internal:3128"]
 */
export function proxyHosts(env: Readonly<Record<string, string | undefined>>): string[] {
  const hosts = PROXY_VARIABLES.flatMap((name) => {
    const value = env[name]?.trim();
    const url = value ? URL.parse(value.includes("://") ? value : `http://${value}`) : null;
    if (!url?.hostname) return [];
    return [`${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`];
  });
  return [...new Set(hosts)];
}

/** The kinds of access app code can be granted in deno.json's `permissions.app`. */
export const APP_PERMISSION_KINDS = ["net", "env", "read"] as const;

/** What deno.json grants the app's own code, by kind: a list of values, or `true` for all. */
export type AppPermissions = Partial<
  Record<(typeof APP_PERMISSION_KINDS)[number], readonly string[] | boolean>
>;

/**
 * `permissions.app` of a deno.json's text, validated; `{}` when it has none. A value that cannot
 * be granted throws a {@link ConfigError} naming the key and what it expected.
 *
 * @example
 * parseAppPermissions('{"permissions":{"app":{"env":["API_KEY"]}}}'); // { env: ["API_KEY"] }
 */
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
    if (!(APP_PERMISSION_KINDS as readonly string[]).includes(kind)) {
      fail(`.${kind}`, `one of ${APP_PERMISSION_KINDS.join(", ")} (the kinds the shell grants)`);
    }
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
