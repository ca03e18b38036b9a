/**
 * Configuration, read once from the environment and validated: a bad value is a ConfigError
 * naming the variable and what it expected, and start-up stops with that one line.
 */
import { DEV_INBOX_DSN } from "../constants.ts";
import { type Dsn, parseDsn } from "../dsn.ts";

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

type Env = Readonly<Record<string, string | undefined>>;

// Each reader takes a trimmed, non-empty value and returns it parsed, or throws the reason.
const expected = (what: string, raw: string): never => {
  // Quoted and shortened: a pasted secret or a huge value must not flood the one line.
  const shown = JSON.stringify(raw.length > 80 ? `${raw.slice(0, 77)}...` : raw);
  throw new ConfigError(`expected ${what}, got ${shown}`);
};
const integer = (min: number, max: number) => (raw: string): number => {
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  return value >= min && value <= max ? value : expected(`an integer from ${min} to ${max}`, raw);
};
const rate = (raw: string): number => {
  const value = /^\d*\.?\d+$/.test(raw) ? Number(raw) : NaN;
  return value <= 1 ? value : expected("a number from 0 to 1", raw);
};
const oneOf = <const T extends string>(...choices: T[]) => (raw: string): T => {
  const value = raw.toLowerCase() as T;
  return choices.includes(value) ? value : expected(`one of ${choices.join(", ")}`, value);
};
const boolean = (raw: string): boolean => {
  const value = raw.toLowerCase();
  if (["1", "true", "yes", "on"].includes(value)) return true;
  return ["0", "false", "no", "off"].includes(value) ? false : expected("true or false", value);
};
// A host name or an IP address, IPv6 brackets dropped (Deno.serve wants them bare). A comma or
// a space would also break the launcher's --allow-net.
const host = (raw: string): string => {
  const bare = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
  const name = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;
  if (name.test(bare) || /^[0-9a-f:.]*:[0-9a-f:.]*$/i.test(bare)) return bare;
  return expected("an IP address or a host name of this machine", raw);
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
const list = <T>(each: (raw: string) => T) => (raw: string): T[] =>
  raw.split(",").map((s) => s.trim()).filter(Boolean).map(each);
// An http(s) URL prefix, an origin alone standing for all its paths: never a bare host or a
// substring, which would also match https://api.example.com.evil.net.
const urlPrefix = (raw: string): string => {
  const url = URL.parse(raw);
  const plain = url && /^https?:$/.test(url.protocol) && !url.username && !url.password;
  if (plain && !url.search && !url.hash) return url.href;
  return expected("URLs like https://api.example.com or https://example.com/api/", raw);
};
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
  SENTRY_DSN: (raw: string) => (dsn(raw), raw),
  SENTRY_ENVIRONMENT: (raw: string) => raw,
  SENTRY_RELEASE: (raw: string) => raw,
  SENTRY_TRACES_SAMPLE_RATE: rate,
  SENTRY_ENABLE_LOGS: boolean,
  SENTRY_REPLAYS_SESSION_SAMPLE_RATE: rate,
  SENTRY_REPLAYS_ON_ERROR_SAMPLE_RATE: rate,
  SENTRY_PROFILES_SAMPLE_RATE: rate,
  SENTRY_FEEDBACK: boolean,
  SENTRY_TRACE_PROPAGATION_TARGETS: list(urlPrefix),
  TUNNEL_ALLOWED_DSNS: list(dsn),
  TUNNEL_MAX_BODY_BYTES: integer(1, Number.MAX_SAFE_INTEGER),
  TUNNEL_TIMEOUT_MS: integer(1, 600_000),
  TUNNEL_RATE_LIMIT: integer(0, 1_000_000),
  TUNNEL_DSN_RATE_LIMIT: integer(0, 1_000_000),
  DELIVERY_QUEUE_BYTES: integer(1024 * 1024, Number.MAX_SAFE_INTEGER),
  DELIVERY_MAX_AGE_S: integer(1, 7 * 24 * 3600),
  TUNNEL_PATH: path,
  API_MAX_BODY_BYTES: integer(1, Number.MAX_SAFE_INTEGER),
  TRUST_PROXY: boolean,
  SERVE_SOURCE_MAPS: boolean,
  DEBUG_ERROR_ROUTE: boolean,
  LOG_FORMAT: oneOf("json", "text"),
  HSTS: oneOf("auto", "on", "off"),
  // Development switches: read only where granted (`deno task dev` grants them, production never).
  DEV_MODE: boolean,
  DEV_INBOX: boolean,
};
type Name = keyof typeof VARIABLES;

/** The variables {@link loadConfig} reads in production. */
export const CONFIG_VARIABLES = (Object.keys(VARIABLES) as Name[]).filter((name) =>
  !name.startsWith("DEV_")
);

/** The development switches, granted by `deno task dev` only. */
export const DEV_VARIABLES = ["DEV_MODE", "DEV_INBOX"] as const;

/** Every variable the server process reads: its configuration, plus NODE_ENV (React's). */
export const SERVER_ENV_VARIABLES: readonly string[] = ["NODE_ENV", ...CONFIG_VARIABLES];

/** Everything the server needs to know from its environment (see {@link loadConfig}). */
export type Config = Readonly<ReturnType<typeof loadConfig>>;

/** Build a {@link Config} from environment variables; the defaults are the README's. */
export function loadConfig(env: Env) {
  const read = <N extends Name>(name: N): ReturnType<(typeof VARIABLES)[N]> | undefined => {
    // Empty counts as unset: `FOO= deno task start` is a common way to clear a value.
    const raw = env[name]?.trim();
    if (!raw) return undefined;
    try {
      return VARIABLES[name](raw) as ReturnType<(typeof VARIABLES)[N]>;
    } catch (error) {
      throw error instanceof ConfigError ? new ConfigError(`${name}: ${error.message}`) : error;
    }
  };
  const devMode = read("DEV_MODE") ?? false;
  const ownDsn = read("SENTRY_DSN");
  // Monitoring goes to an in-memory inbox at /_dev/inbox instead of Sentry.
  const devInbox = read("DEV_INBOX") ?? (devMode && ownDsn === undefined);
  if (devInbox && ownDsn !== undefined) {
    throw new ConfigError(
      "DEV_INBOX: expected false when SENTRY_DSN is set (the inbox replaces it)",
    );
  }
  // The app's own DSN (browser and server SDKs); the inbox's answers only on this server.
  const sentryDsn: string | undefined = devInbox ? DEV_INBOX_DSN : ownDsn;
  return {
    port: read("PORT") ?? 8000,
    host: read("HOST") ?? "0.0.0.0",
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
    /** URL prefixes the server's outgoing requests carry trace headers to (and its own origin). */
    tracePropagationTargets: read("SENTRY_TRACE_PROPAGATION_TARGETS") ?? [],
    /** DSNs the tunnel forwards for: the app's own first, then TUNNEL_ALLOWED_DSNS. */
    tunnelAllowedDsns: [
      ...sentryDsn === undefined ? [] : [parseDsn(sentryDsn)!],
      ...read("TUNNEL_ALLOWED_DSNS") ?? [],
    ] as readonly Dsn[],
    tunnelMaxBodyBytes: read("TUNNEL_MAX_BODY_BYTES") ?? 20 * 1024 * 1024,
    tunnelTimeoutMs: read("TUNNEL_TIMEOUT_MS") ?? 30_000,
    /** Envelopes per client address per minute (0: no limit, nor any per-DSN one); Session
     * Replay sends 20-40. */
    tunnelRateLimit: read("TUNNEL_RATE_LIMIT") ?? 600,
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
    /** `PUBLIC_*` variables, for the browser's `publicConfig()`; no other variable reaches it. */
    publicVariables: Object.fromEntries(
      Object.entries(env).filter(([name, value]) => PUBLIC_NAME.test(name) && value !== undefined),
    ) as Readonly<Record<string, string>>,
    /** Whether X-Forwarded-For / X-Forwarded-Proto may be believed (behind a proxy). */
    trustProxy: read("TRUST_PROXY") ?? false,
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

const PUBLIC_NAME = /^PUBLIC_[A-Z0-9_]+$/;

/** The argument that hands the server the names of the `PUBLIC_*` variables it was granted. */
export const PUBLIC_VARIABLES_FLAG = "--public-variables=";

/**
 * The config variables, granted dev switches and `PUBLIC_*` variables: all where the whole
 * environment is readable (Deno Deploy), else those named in {@link PUBLIC_VARIABLES_FLAG}.
 */
export function readEnv(): Record<string, string | undefined> {
  const granted = (variable?: string) =>
    Deno.permissions.querySync({ name: "env", variable }).state === "granted";
  const named = Deno.args.find((arg) => arg.startsWith(PUBLIC_VARIABLES_FLAG));
  const publicNames = granted()
    ? Object.keys(Deno.env.toObject())
    : named?.slice(PUBLIC_VARIABLES_FLAG.length).split(",") ?? [];
  const names = [
    ...CONFIG_VARIABLES,
    ...DEV_VARIABLES.filter((name) => granted(name)),
    ...publicNames.filter((name) => PUBLIC_NAME.test(name)),
  ];
  return Object.fromEntries(names.map((name) => [name, Deno.env.get(name)]));
}
