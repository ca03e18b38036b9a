/**
 * Start-up check of Deno permissions: the server asks for exactly what it uses, and a missing
 * grant stops it with one line naming the flag, instead of failing on the first request.
 */
import { type Config, PROXY_VARIABLES, SERVER_ENV_VARIABLES } from "./config.ts";
import { formatHost } from "./listen_address.ts";

/** One permission the server needs and why. */
export interface Need {
  readonly descriptor: Deno.PermissionDescriptor;
  /** The command-line flag that grants it. */
  readonly flag: string;
  readonly why: string;
}

/** Env access for every configuration variable: checked before the configuration is read. */
export function envPermissions(): Need[] {
  return SERVER_ENV_VARIABLES.map((name) => ({
    descriptor: { name: "env", variable: name },
    flag: `--allow-env=${name}`,
    why: "to read the configuration",
  }));
}

/** What serving needs for this configuration: the static folder, listening, the ingests. */
export function runtimePermissions(config: Config, staticDir: string): Need[] {
  const needs: Need[] = [
    {
      descriptor: { name: "read", path: staticDir },
      flag: `--allow-read=${staticDir}`,
      why: "to serve static files and read the build manifest",
    },
  ];
  const [listen, ...ingests] = netHosts(config);
  for (const host of [listen, ...ingests]) {
    needs.push({
      descriptor: { name: "net", host },
      flag: `--allow-net=${host}`,
      why: host === listen ? "to listen for requests" : "to send monitoring data to Sentry",
    });
  }
  return needs;
}

/**
 * `host:port` the server listens on, then each Sentry host it reaches, then each outbound
 * `proxies` host (no repeats). The
 * server's own DSN is granted by `URL.host`, which has no port when the port is the scheme's
 * default: Deno grants a port-less query only for a port-less grant, and `@sentry/deno`, which
 * the server once used, warned at every start-up when given `host:443` alone.
 */
export function netHosts(config: Config, proxies: readonly string[] = []): string[] {
  // An IPv6 listen address needs brackets to be told apart from its port.
  const host = formatHost(config.host);
  const ingests = config.tunnelAllowedDsns.map((dsn) => `${dsn.hostname}:${dsn.port}`);
  if (config.sentryDsn !== undefined) ingests.unshift(new URL(config.sentryDsn).host);
  // A port-less grant covers every port of its host: drop the `host:port` it makes redundant.
  const withoutPort = (ingest: string) => ingest.replace(/:\d+$/, "");
  const bare = new Set(ingests.filter((ingest) => withoutPort(ingest) === ingest));
  const needed = ingests.filter((ingest) => bare.has(ingest) || !bare.has(withoutPort(ingest)));
  return [...new Set([`${host}:${config.port}`, ...needed, ...proxies])];
}

/**
 * `host:port` of each outbound proxy `env` sets (see `PROXY_VARIABLES`); a value without a
 * scheme is an http proxy, as Deno reads it, and one that is no URL is left out. Deno 2.9's
 * fetch checks --allow-net against the ingest, not the proxy, so this grant is for a Deno that
 * checks the connection it opens as well.
 *
 * @example
 * proxyHosts({ HTTPS_PROXY: "http://proxy.internal:3128" }); // ["proxy.internal:3128"]
 */
export function proxyHosts(env: Readonly<Record<string, string | undefined>>): string[] {
  const hosts = PROXY_VARIABLES.flatMap((name) => {
    const value = env[name]?.trim();
    if (!value) return [];
    const url = URL.parse(value.includes("://") ? value : `http://${value}`);
    if (url === null || url.hostname === "") return [];
    return [`${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`];
  });
  return [...new Set(hosts)];
}

/** The one-line message for a missing permission. */
export function describeMissing(need: Need): string {
  return `missing permission ${need.flag} (needed ${need.why})`;
}

/** The first need that is not granted, or `undefined` when all are. */
export function firstMissing(needs: readonly Need[]): Need | undefined {
  return needs.find((need) => Deno.permissions.querySync(need.descriptor).state !== "granted");
}
