/** Sentry DSNs (`https://{publicKey}@{host}[:{port}]/{path/}{projectId}`) and their ingest URLs,
 * for the configuration, the tunnel and the CSP. */

/** A parsed, normalised Sentry DSN. */
export interface Dsn {
  readonly protocol: string;
  /** Lower-case host name (IPv6 in brackets), without the port. */
  readonly hostname: string;
  /** The port, explicit or the protocol's default. */
  readonly port: string;
  /** Path prefix before the project id, without a trailing slash ("" for sentry.io). */
  readonly path: string;
  readonly publicKey: string;
  /** The legacy secret key, or ""; config refuses one, so an envelope naming one matches none. */
  readonly secretKey: string;
  readonly projectId: string;
}

const DEFAULT_PORTS: Record<string, string> = { "http:": "80", "https:": "443" };

/** Parse a DSN string; `null` for anything that is not a usable DSN. */
export function parseDsn(input: string): Dsn | null {
  const url = URL.parse(input);
  // Checked before the port: an explicit port would otherwise let `ftp:` or `ws:` through.
  if (url === null || !Object.hasOwn(DEFAULT_PORTS, url.protocol)) return null;
  const port = url.port || DEFAULT_PORTS[url.protocol];
  if (port === "0" || !/^[A-Za-z0-9_-]+$/.test(url.username)) return null;
  if (url.search || url.hash || !url.hostname) return null;
  const segments = url.pathname.split("/");
  const projectId = segments.pop() ?? "";
  if (!/^\d+$/.test(projectId)) return null;
  // Trailing slashes dropped segment by segment: /\/+$/ is quadratic on a client's run of them.
  while (segments.at(-1) === "") segments.pop();
  return {
    protocol: url.protocol,
    hostname: url.hostname.toLowerCase(),
    port,
    path: segments.join("/"),
    publicKey: url.username,
    secretKey: url.password,
    projectId,
  };
}

/** True when two DSNs name the same project on the same ingest with the same key. */
export function sameDsn(a: Dsn, b: Dsn): boolean {
  return (Object.keys(a) as (keyof Dsn)[]).every((field) => a[field] === b[field]);
}

/** The configured DSN `candidate` names: URLs are built from it, never from the candidate. */
export function findAllowedDsn(candidate: Dsn, allowed: readonly Dsn[]): Dsn | undefined {
  return allowed.find((dsn) => sameDsn(dsn, candidate));
}

/** `{protocol}//{host}{path}/api/{projectId}/{endpoint}/` for a DSN. */
export function ingestUrl(dsn: Dsn, endpoint: "envelope" | "security"): string {
  const port = DEFAULT_PORTS[dsn.protocol] === dsn.port ? "" : `:${dsn.port}`;
  return `${dsn.protocol}//${dsn.hostname}${port}${dsn.path}/api/${dsn.projectId}/${endpoint}/`;
}
