/**
 * Configuration: read once from the environment, validated, passed down as a typed object.
 * An invalid value throws a {@link ConfigError} whose message names the variable and what it
 * expected, so start-up can stop with that one line.
 */
import { DEV_INBOX_DSN } from "../constants.ts";
import { type Dsn, parseDsn } from "../tunnel/dsn.ts";

/** Everything the server needs to know from its environment. */
export interface Config {
  readonly port: number;
  readonly host: string;
  /** The app's own DSN (browser and server SDKs), if monitoring is configured. */
  readonly sentryDsn?: string;
  readonly sentryEnvironment: string;
  /** An explicit release; when absent the build id is used. */
  readonly sentryRelease?: string;
  readonly tracesSampleRate: number;
  /** DSNs the tunnel forwards for: the app's own first, then TUNNEL_ALLOWED_DSNS. */
  readonly tunnelAllowedDsns: readonly Dsn[];
  readonly tunnelMaxBodyBytes: number;
  readonly tunnelTimeoutMs: number;
  /** Envelopes per client address per minute through the tunnel; 0 turns the limit off. */
  readonly tunnelRateLimit: number;
  /** Where the tunnel answers: the route, the browser SDK's `tunnel` option. */
  readonly tunnelPath: string;
  /** Whether X-Forwarded-For / X-Forwarded-Proto may be believed (the app is behind a proxy). */
  readonly trustProxy: boolean;
  readonly serveSourceMaps: boolean;
  /** Expose `GET /debug/error`, which throws, to check that server errors reach Sentry. */
  readonly debugErrorRoute: boolean;
  /** Request log lines: JSON for log pipelines, text for people. */
  readonly logFormat: "json" | "text";
  /** Strict-Transport-Security: `auto` sends it on requests that arrived over HTTPS. */
  readonly hsts: "auto" | "on" | "off";
  /** `deno task dev`: live reload under /_dev/, and development defaults for monitoring. */
  readonly devMode: boolean;
  /** Monitoring goes to an in-memory inbox at /_dev/inbox instead of Sentry. */
  readonly devInbox: boolean;
}

/** A configuration value that cannot be used; the message is one line for the operator. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

type Env = Readonly<Record<string, string | undefined>>;

/** Default values, documented in the README's configuration table. */
export const DEFAULTS = {
  port: 8000,
  host: "0.0.0.0",
  sentryEnvironment: "production",
  tracesSampleRate: 0.1,
  tunnelMaxBodyBytes: 20 * 1024 * 1024,
  tunnelTimeoutMs: 30_000,
  // One browser tab with Session Replay sends a replay segment about every 5 s plus errors,
  // transactions, sessions and client reports: 20-40 envelopes a minute. 600 (10 a second)
  // leaves room for a few dozen busy tabs behind one NAT or office address and for a burst
  // of queued envelopes after a reconnect, yet caps one address far below a flood.
  tunnelRateLimit: 600,
  tunnelPath: "/monitoring",
} as const;

/**
 * Build a {@link Config} from environment variables.
 *
 * @example
 * loadConfig({ PORT: "0", HOST: "127.0.0.1" }).port; // 0
 */
export function loadConfig(env: Env): Config {
  const devMode = boolean(env, "DEV_MODE", false);
  const ownSentryDsn = optional(env, "SENTRY_DSN");
  const devInbox = boolean(env, "DEV_INBOX", devMode && ownSentryDsn === undefined);
  if (devInbox && ownSentryDsn !== undefined) {
    throw new ConfigError(
      "DEV_INBOX: expected false when SENTRY_DSN is set (the inbox replaces Sentry)",
    );
  }
  // The inbox stands in for Sentry: both SDKs get a DSN that only this server answers.
  const sentryDsn = devInbox ? DEV_INBOX_DSN : ownSentryDsn;
  const ownDsn = sentryDsn === undefined ? [] : [dsnValue("SENTRY_DSN", sentryDsn)];
  const extraDsns = (optional(env, "TUNNEL_ALLOWED_DSNS") ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
    .map((s) => dsnValue("TUNNEL_ALLOWED_DSNS", s));
  return {
    port: integer(env, "PORT", DEFAULTS.port, 0, 65535),
    host: hostValue(env, "HOST", DEFAULTS.host),
    sentryDsn,
    sentryEnvironment: optional(env, "SENTRY_ENVIRONMENT") ??
      (devMode ? "development" : DEFAULTS.sentryEnvironment),
    sentryRelease: optional(env, "SENTRY_RELEASE"),
    // In development every request and page load is traced, so the inbox shows them all.
    tracesSampleRate: rate(
      env,
      "SENTRY_TRACES_SAMPLE_RATE",
      devMode ? 1 : DEFAULTS.tracesSampleRate,
    ),
    tunnelAllowedDsns: [...ownDsn, ...extraDsns],
    tunnelMaxBodyBytes: integer(
      env,
      "TUNNEL_MAX_BODY_BYTES",
      DEFAULTS.tunnelMaxBodyBytes,
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    tunnelTimeoutMs: integer(env, "TUNNEL_TIMEOUT_MS", DEFAULTS.tunnelTimeoutMs, 1, 600_000),
    tunnelRateLimit: integer(env, "TUNNEL_RATE_LIMIT", DEFAULTS.tunnelRateLimit, 0, 1_000_000),
    tunnelPath: tunnelPath(env, "TUNNEL_PATH", DEFAULTS.tunnelPath),
    trustProxy: boolean(env, "TRUST_PROXY", false),
    serveSourceMaps: boolean(env, "SERVE_SOURCE_MAPS", false),
    debugErrorRoute: boolean(env, "DEBUG_ERROR_ROUTE", false),
    logFormat: oneOf(env, "LOG_FORMAT", ["json", "text"] as const, "json"),
    hsts: oneOf(env, "HSTS", ["auto", "on", "off"] as const, "auto"),
    devMode,
    devInbox,
  };
}

/** The variables {@link loadConfig} reads in production; start-up checks env permission on these. */
export const CONFIG_VARIABLES = [
  "PORT",
  "HOST",
  "SENTRY_DSN",
  "SENTRY_ENVIRONMENT",
  "SENTRY_RELEASE",
  "SENTRY_TRACES_SAMPLE_RATE",
  "TUNNEL_ALLOWED_DSNS",
  "TUNNEL_MAX_BODY_BYTES",
  "TUNNEL_TIMEOUT_MS",
  "TUNNEL_RATE_LIMIT",
  "TUNNEL_PATH",
  "TRUST_PROXY",
  "SERVE_SOURCE_MAPS",
  "DEBUG_ERROR_ROUTE",
  "LOG_FORMAT",
  "HSTS",
] as const;

/**
 * Development switches: read only when the process was granted them (`deno task dev` is; the
 * production tasks are not), so production ignores them whatever the environment says.
 */
export const DEV_VARIABLES = ["DEV_MODE", "DEV_INBOX"] as const;

/** Every variable the server process reads: its configuration, plus NODE_ENV (React's). */
export const SERVER_ENV_VARIABLES: readonly string[] = ["NODE_ENV", ...CONFIG_VARIABLES];

/**
 * Deno's own variables for an outbound proxy: its fetch reads them without --allow-env, and the
 * launcher reads them to grant the proxy's host (see `proxyHosts`).
 */
export const PROXY_VARIABLES = ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] as const;

/** What the launcher (server/tasks/start.ts) reads: the server's variables and the proxies. */
export const LAUNCHER_ENV_VARIABLES: readonly string[] = [
  ...SERVER_ENV_VARIABLES,
  ...PROXY_VARIABLES,
];

/** The configuration variables from the process environment (only those: least privilege). */
export function readEnv(): Record<string, string | undefined> {
  const dev = DEV_VARIABLES.filter((variable) =>
    Deno.permissions.querySync({ name: "env", variable }).state === "granted"
  );
  return Object.fromEntries(
    [...CONFIG_VARIABLES, ...dev].map((name) => [name, Deno.env.get(name)]),
  );
}

// Empty strings count as unset: `FOO= deno task start` is a common way to clear a value.
function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === "" ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= min && value <= max)) {
    throw new ConfigError(`${name}: expected an integer from ${min} to ${max}, got ${show(raw)}`);
  }
  return value;
}

// A host name, an IPv4 address or an IPv6 address (brackets allowed, and dropped: Deno.serve
// wants them bare). Anything else could not be listened on, and a comma or a space would
// break the launcher's --allow-net list.
const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;
const IPV6 = /^[0-9a-f:.]*:[0-9a-f:.]*$/i;

function hostValue(env: Env, name: string, fallback: string): string {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const bare = raw.startsWith("[") && raw.endsWith("]") ? raw.slice(1, -1) : raw;
  if (raw.length <= 253 && (HOST_NAME.test(bare) || IPV6.test(bare))) return bare;
  throw new ConfigError(
    `${name}: expected an IP address or a host name of this machine, got ${show(raw)}`,
  );
}

function rate(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const value = /^\d*\.?\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 0 && value <= 1)) {
    throw new ConfigError(`${name}: expected a number from 0 to 1, got ${show(raw)}`);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (["1", "true", "yes", "on"].includes(raw)) return true;
  if (["0", "false", "no", "off"].includes(raw)) return false;
  throw new ConfigError(`${name}: expected true or false, got ${show(raw)}`);
}

// One or more segments of letters, digits, "-", "_" and "."; no "." or ".." segment, no
// trailing slash. Paths the server answers itself (or reserves) are refused so the tunnel can
// never shadow them; a page at the same path stops start-up as a duplicate route.
const TUNNEL_PATH = /^(\/[A-Za-z0-9_.-]+)+$/;
const RESERVED_PREFIXES = ["/api", "/build", "/_dev", "/healthz", "/debug"];

function tunnelPath(env: Env, name: string, fallback: string): string {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  const reserved = RESERVED_PREFIXES.find((p) => raw === p || raw.startsWith(`${p}/`));
  if (
    !TUNNEL_PATH.test(raw) || raw.split("/").some((s) => s === "." || s === "..") ||
    reserved !== undefined
  ) {
    throw new ConfigError(
      `${name}: expected a path like /monitoring or /t/a8f3 (letters, digits, "-", "_", "."), ` +
        `not under ${RESERVED_PREFIXES.join(", ")}, got ${show(raw)}`,
    );
  }
  return raw;
}

function oneOf<const T extends string>(
  env: Env,
  name: string,
  choices: readonly T[],
  fallback: T,
): T {
  const raw = optional(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if ((choices as readonly string[]).includes(raw)) return raw as T;
  throw new ConfigError(`${name}: expected one of ${choices.join(", ")}, got ${show(raw)}`);
}

function dsnValue(name: string, raw: string): Dsn {
  const dsn = parseDsn(raw);
  if (dsn === null) {
    throw new ConfigError(
      `${name}: expected a Sentry DSN like https://<key>@<host>/<project-id>, got ${show(raw)}`,
    );
  }
  // Browsers hold these DSNs (the page hands SENTRY_DSN over as it is): a secret would be public.
  if (dsn.secretKey !== "") {
    throw new ConfigError(
      `${name}: the DSN holds a secret key (https://<key>:<secret>@...), which browsers would ` +
        `see; remove ":<secret>" (Sentry does not need it)`,
    );
  }
  return dsn;
}

// Quote and shorten so a pasted secret or a huge value never floods the one-line error.
function show(raw: string): string {
  return JSON.stringify(raw.length > 80 ? `${raw.slice(0, 77)}...` : raw);
}
