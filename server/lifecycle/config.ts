/** Configuration, read once from the environment and validated: a bad value is a ConfigError naming
 * the variable and what it expected, and start-up stops with that one line. */
import { DEV_INBOX_DSN } from "../constants.ts";
import { type Dsn, parseDsn } from "../dsn.ts";
import { BODY_DEFAULTS } from "../http/body_budget.ts";
import { ipRanges, type TrustProxy } from "../http/client_address.ts";

/** A start-up failure the operator can fix; the message is one line. */
export class StartupError extends Error {
  override name = "StartupError";
}
/** A configuration value that cannot be used. */
export class ConfigError extends StartupError {
  override name = "ConfigError";
}

/** Stop start-up with one line and exit code 1 for an operator error; rethrow anything else. */
export function exitOnStartupError(error: unknown): never {
  if (!(error instanceof StartupError)) throw error;
  console.error(`error: ${error.message}`);
  Deno.exit(1);
}

// Each reader takes a trimmed, non-empty value and returns it parsed, or throws the reason.
const expected = (what: string, raw: string): never => {
  // Quoted and shortened: a pasted secret or a huge value must not flood the one line.
  const shown = JSON.stringify(raw.length > 80 ? `${raw.slice(0, 77)}...` : raw);
  throw new ConfigError(`expected ${what}, got ${shown}`);
};
/** A whole number from `min` to `max`. */
export const integer = (min: number, max: number) => (raw: string): number => {
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  return value >= min && value <= max ? value : expected(`an integer from ${min} to ${max}`, raw);
};
/** A number from 0 to 1. */
export const rate = (raw: string): number => {
  const value = /^\d*\.?\d+$/.test(raw) ? Number(raw) : NaN;
  return value <= 1 ? value : expected("a number from 0 to 1", raw);
};
/** One of `choices`, in any case. */
export const oneOf = <const T extends string>(...choices: T[]) => (raw: string): T => {
  const value = raw.toLowerCase() as T;
  return choices.includes(value) ? value : expected(`one of ${choices.join(", ")}`, value);
};
/** true/false, 1/0, yes/no or on/off. */
export const boolean = (raw: string): boolean => {
  const value = raw.toLowerCase();
  if (["1", "true", "yes", "on"].includes(value)) return true;
  return ["0", "false", "no", "off"].includes(value) ? false : expected("true or false", value);
};
// A host name or an IP address, IPv6 brackets dropped (Deno.serve wants them bare). A comma or
// a space would also break the launcher's --allow-net.
const host = (raw: string, whose = " of this machine"): string => {
  const bare = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
  const name = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;
  if (name.test(bare) || /^[0-9a-f:.]*:[0-9a-f:.]*$/i.test(bare)) return bare;
  return expected(`an IP address or a host name${whose}`, raw);
};
// Paths the server answers itself are refused, so the tunnel never shadows them.
const RESERVED = ["/api", "/build", "/_dev", "/healthz", "/debug"];
const path = (raw: string): string => {
  const reserved = RESERVED.some((p) => raw === p || raw.startsWith(`${p}/`));
  const dots = raw.split("/").some((s) => s === "." || s === "..");
  if (/^(\/[A-Za-z0-9_.-]+)+$/.test(raw) && !dots && !reserved) return raw;
  const like = `a path like /monitoring or /t/a8f3 (letters, digits, "-", "_", ".")`;
  return expected(`${like}, not under ${RESERVED.join(", ")}`, raw);
};
/** A comma-separated list, each entry read by `each`. */
export const list = <T>(each: (raw: string) => T) => (raw: string): T[] =>
  raw.split(",").map((s) => s.trim()).filter(Boolean).map(each);
// An http(s) URL prefix, an origin alone standing for all its paths: never a bare host or a
// substring, which would also match https://api.example.com.evil.net.
const urlPrefix = (raw: string): string => {
  const url = URL.parse(raw);
  const plain = url && /^https?:$/.test(url.protocol) && !url.username && !url.password;
  if (plain && !url.search && !url.hash) return url.href;
  return expected("URLs like https://api.example.com or https://example.com/api/", raw);
};
/** An absolute http(s) URL. */
export const url = (raw: string): string =>
  /^https?:$/.test(URL.parse(raw)?.protocol ?? "") ? raw : expected("an http(s) URL", raw);
/** Any text. */
export const text = (raw: string): string => raw;
// true/false (one hop, none), how many proxies, or their addresses and ranges (Express's forms).
const trustProxy = (raw: string): TrustProxy => {
  if (/^(true|false|yes|no|on|off|0|1)$/i.test(raw)) return boolean(raw);
  if (/^\d+$/.test(raw)) return { hops: integer(0, 32)(raw) };
  const ranges = ipRanges(list(text)(raw));
  if (typeof ranges !== "string") return { hops: 0, ranges };
  return expected("true, false, a hop count or addresses like 10.0.0.0/8", ranges);
};
// As Host carries it: lower case, an IPv6 address in brackets.
const hostName = (raw: string) =>
  host(raw, " (no port or path)").toLowerCase().replace(/^.*:.*$/, "[$&]");
const dsn = (raw: string): Dsn => {
  const parsed = parseDsn(raw) ?? expected("a Sentry DSN like https://<key>@<host>/<id>", raw);
  // Browsers hold these DSNs (the page hands SENTRY_DSN over as it is): a secret would be public.
  if (parsed.secretKey === "") return parsed;
  throw new ConfigError(
    `the DSN holds a secret key (https://<key>:<secret>@...), which browsers would see; ` +
      `remove ":<secret>" (Sentry does not need it)`,
  );
};

/** How each variable the server reads is parsed. */
const VARIABLES = {
  PORT: integer(0, 65535),
  HOST: host,
  ALLOWED_HOSTS: list(hostName),
  SENTRY_DSN: (raw: string) => (dsn(raw), raw),
  SENTRY_ENVIRONMENT: text,
  SENTRY_RELEASE: text,
  SENTRY_TRACES_SAMPLE_RATE: rate,
  SENTRY_ENABLE_LOGS: boolean,
  SENTRY_REPLAYS_SESSION_SAMPLE_RATE: rate,
  SENTRY_REPLAYS_ON_ERROR_SAMPLE_RATE: rate,
  SENTRY_PROFILES_SAMPLE_RATE: rate,
  SENTRY_FEEDBACK: boolean,
  SENTRY_TRACE_PROPAGATION_TARGETS: list(urlPrefix),
  TUNNEL_ALLOWED_DSNS: list(dsn),
  TUNNEL_MAX_BODY_BYTES: integer(1, Number.MAX_SAFE_INTEGER),
  TUNNEL_RATE_LIMIT: integer(0, 1_000_000),
  TUNNEL_DSN_RATE_LIMIT: integer(0, 1_000_000),
  DELIVERY_QUEUE_BYTES: integer(1024 * 1024, Number.MAX_SAFE_INTEGER),
  DELIVERY_MAX_AGE_S: integer(1, 7 * 24 * 3600),
  TUNNEL_PATH: path,
  API_MAX_BODY_BYTES: integer(1, Number.MAX_SAFE_INTEGER),
  BODY_READ_TIMEOUT_MS: integer(1, 600_000),
  BODY_MIN_RATE: integer(1, Number.MAX_SAFE_INTEGER),
  BODY_MEMORY_BYTES: integer(1, Number.MAX_SAFE_INTEGER),
  TRUST_PROXY: trustProxy,
  SERVE_SOURCE_MAPS: boolean,
  DEBUG_ERROR_ROUTE: boolean,
  LOG_FORMAT: oneOf("json", "text"),
  HSTS: oneOf("auto", "on", "off"),
  // Development switches: read only where granted (`deno task dev` grants them, production never).
  DEV_MODE: boolean,
  DEV_INBOX: boolean,
};
type Name = keyof typeof VARIABLES;
const NAMES = Object.keys(VARIABLES) as Name[];

/** The variables {@link loadConfig} reads in production. */
export const CONFIG_VARIABLES = NAMES.filter((name) => !name.startsWith("DEV_"));

/** The development switches, granted by `deno task dev` only. */
export const DEV_VARIABLES = NAMES.filter((name) => name.startsWith("DEV_"));

/** Every variable the server process reads: its configuration, plus NODE_ENV (React's). */
export const SERVER_ENV_VARIABLES: readonly string[] = ["NODE_ENV", ...CONFIG_VARIABLES];

/** Everything the server needs to know from its environment (see {@link loadConfig}). */
export type Config = Readonly<ReturnType<typeof loadConfig>>;

/** Build a {@link Config} from environment variables; defaults: README, docs/configuration.md. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>) {
  const read = <N extends Name>(name: N) =>
    readVariable<unknown>(name, VARIABLES[name], env[name]) as ReturnType<(typeof VARIABLES)[N]>;
  const devMode = read("DEV_MODE") ?? false;
  const ownDsn = read("SENTRY_DSN");
  // Monitoring goes to an in-memory inbox at /_dev/inbox instead of Sentry.
  const devInbox = read("DEV_INBOX") ?? (devMode && ownDsn === undefined);
  if (devInbox && ownDsn !== undefined) {
    throw new ConfigError(
      "DEV_INBOX: expected false when SENTRY_DSN is set (the inbox replaces it)",
    );
  }
  const [allowedHosts, port] = [read("ALLOWED_HOSTS"), read("PORT") ?? 8000];
  const ownOrigins = (allowedHosts ?? (port ? LOOPBACK.map((h) => `${h}:${port}`) : []))
    .flatMap((host) => [`http://${host}/`, `https://${host}/`]);
  // The app's own DSN (browser and server SDKs); the inbox's answers only on this server.
  const sentryDsn: string | undefined = devInbox ? DEV_INBOX_DSN : ownDsn;
  const tunnelRateLimit = read("TUNNEL_RATE_LIMIT") ?? 600;
  return {
    port,
    host: read("HOST") ?? "0.0.0.0",
    /** The hosts requests may name (others get 421, but /healthz); unset, any. */
    allowedHosts,
    sentryDsn,
    sentryEnvironment: read("SENTRY_ENVIRONMENT") ?? (devMode ? "development" : "production"),
    /** An explicit release; when absent the build id is used. */
    sentryRelease: read("SENTRY_RELEASE"),
    // In development every request and page load is traced, so the inbox shows them all.
    tracesSampleRate: read("SENTRY_TRACES_SAMPLE_RATE") ?? (devMode ? 1 : 0.1),
    enableLogs: read("SENTRY_ENABLE_LOGS") ?? false,
    replaysSessionSampleRate: read("SENTRY_REPLAYS_SESSION_SAMPLE_RATE") ?? 0,
    replaysOnErrorSampleRate: read("SENTRY_REPLAYS_ON_ERROR_SAMPLE_RATE") ?? 0,
    profilesSampleRate: read("SENTRY_PROFILES_SAMPLE_RATE") ?? 0,
    feedback: read("SENTRY_FEEDBACK") ?? false,
    /** URL prefixes the server's outgoing requests carry trace headers to, with its own origins:
     * ALLOWED_HOSTS, else this machine at PORT (none if the system picks it), never from Host. */
    tracePropagationTargets: [...read("SENTRY_TRACE_PROPAGATION_TARGETS") ?? [], ...ownOrigins],
    /** DSNs the tunnel forwards for: the app's own first, then TUNNEL_ALLOWED_DSNS. */
    tunnelAllowedDsns: [
      ...sentryDsn === undefined ? [] : [parseDsn(sentryDsn)!],
      ...read("TUNNEL_ALLOWED_DSNS") ?? [],
    ] as readonly Dsn[],
    tunnelMaxBodyBytes: read("TUNNEL_MAX_BODY_BYTES") ?? 20 * 1024 * 1024,
    /** Envelopes per client address per minute (0: no limit, nor any per-DSN one); Session
     * Replay sends 20-40. */
    tunnelRateLimit,
    /** Envelopes per DSN per minute from all clients (0: none; TUNNEL_RATE_LIMIT=0 too): a flood
     * from rotating addresses spends at most this much of the Sentry quota, per instance. */
    tunnelDsnRateLimit: read("TUNNEL_DSN_RATE_LIMIT") ?? 6_000,
    /** Bytes of envelopes held while Sentry is down: an eighth of Deno Deploy's 512 MB. */
    deliveryQueueBytes: read("DELIVERY_QUEUE_BYTES") ?? 64 * 1024 * 1024,
    /** Envelopes older than this are dropped unsent (Relay keeps 24 h on disk; this is memory). */
    deliveryMaxAgeS: read("DELIVERY_MAX_AGE_S") ?? 3600,
    /** Where the tunnel answers: the route, the browser SDK's `tunnel` option. */
    tunnelPath: read("TUNNEL_PATH") ?? "/monitoring",
    /** The largest JSON body an API route's `ctx.json()` reads. */
    apiMaxBodyBytes: read("API_MAX_BODY_BYTES") ?? 1024 * 1024,
    /** Request bodies in flight (tunnel and API): time between reads, minimum bytes/s, memory. */
    bodies: {
      clientLimits: tunnelRateLimit > 0,
      readTimeoutMs: read("BODY_READ_TIMEOUT_MS") ?? BODY_DEFAULTS.readTimeoutMs,
      minRate: read("BODY_MIN_RATE") ?? BODY_DEFAULTS.minRate,
      memoryBytes: read("BODY_MEMORY_BYTES") ?? BODY_DEFAULTS.memoryBytes,
    },
    /** `PUBLIC_*` variables, for the browser's `publicConfig()`; no other variable reaches it. */
    publicVariables: Object.fromEntries(
      Object.entries(env).filter(([name, value]) => PUBLIC_NAME.test(name) && value !== undefined),
    ) as Readonly<Record<string, string>>,
    /** Which proxies' X-Forwarded-For / X-Forwarded-Proto are believed (client_address.ts). */
    trustProxy: read("TRUST_PROXY") ?? false as TrustProxy,
    serveSourceMaps: read("SERVE_SOURCE_MAPS") ?? false,
    /** Expose `GET /debug/error`, which throws, to check that server errors reach Sentry. */
    debugErrorRoute: read("DEBUG_ERROR_ROUTE") ?? false,
    /** Request log lines: JSON for log pipelines, text for people. */
    logFormat: read("LOG_FORMAT") ?? "json",
    /** Strict-Transport-Security: `auto` sends it on requests that arrived over HTTPS. */
    hsts: read("HSTS") ?? "auto",
    devMode,
    devInbox,
  };
}

/** `raw` read by `reader`, `undefined` when unset; a bad value's error names the variable. */
export function readVariable<T>(name: string, reader: (raw: string) => T, raw?: string) {
  // Empty counts as unset: `FOO= deno task start` is a common way to clear a value.
  if (!raw?.trim()) return undefined;
  try {
    return reader(raw.trim());
  } catch (error) {
    throw error instanceof ConfigError ? new ConfigError(`${name}: ${error.message}`) : error;
  }
}

const PUBLIC_NAME = /^PUBLIC_[A-Z0-9_]+$/;
// Without `variable`: whether the whole environment is readable.
const granted = (variable?: string) =>
  Deno.permissions.querySync({ name: "env", variable }).state === "granted";
const LOOPBACK = ["localhost", "127.0.0.1", "[::1]"];

/** The argument that hands the server the names of the `PUBLIC_*` variables it was granted. */
export const PUBLIC_VARIABLES_FLAG = "--public-variables=";

/** The config variables, granted dev switches and `PUBLIC_*` variables: all where the whole
 * environment is readable (Deno Deploy), else those named in {@link PUBLIC_VARIABLES_FLAG}. */
export function readEnv(): Record<string, string | undefined> {
  const named = Deno.args.find((arg) => arg.startsWith(PUBLIC_VARIABLES_FLAG));
  const publicNames = granted()
    ? Object.keys(Deno.env.toObject())
    : named?.slice(PUBLIC_VARIABLES_FLAG.length).split(",") ?? [];
  const names = [
    ...CONFIG_VARIABLES,
    ...DEV_VARIABLES.filter(granted),
    ...publicNames.filter((name) => PUBLIC_NAME.test(name)),
  ];
  return Object.fromEntries(names.map((name) => [name, Deno.env.get(name)]));
}

type Table = Readonly<Record<string, (raw: string) => unknown>>;
/** The app's settings: each variable's value as its reader returns it, `undefined` when unset. */
export type Settings<T extends Table> = { readonly [K in keyof T]: ReturnType<T[K]> | undefined };
/** The first bad app setting {@link defineSettings} met: start-up stops on it. */
export let badSetting: ConfigError | undefined;

/** Declare the app's settings (server/settings.ts) and read them now. Never throws: a bad value is
 * left unset and kept for start-up to stop on ({@link badSetting}). */
export function defineSettings<const T extends Table>(table: T): Settings<T> {
  const values = Object.fromEntries(Object.keys(table).map((name) => [name, undefined as unknown]));
  for (const [name, reader] of Object.entries(table)) {
    try {
      // The launcher grants each declared name: the server was started some other way.
      if (!granted(name)) throw new ConfigError(`${name}: missing permission --allow-env=${name}`);
      values[name] = readVariable(name, reader, Deno.env.get(name));
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      badSetting ??= error;
    }
  }
  return values as Settings<T>;
}
