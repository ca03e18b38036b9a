/** CSP for HTML: scripts only with the request's nonce ('strict-dynamic' loads their chunks), all
 * else same-origin; `connect-src 'self'` suffices as the browser SDK posts to the tunnel, and
 * `worker-src 'self'` admits Replay's compression worker (nonces do not apply to workers). */
import { ingestUrl } from "../dsn.ts";
import type { Config } from "../lifecycle/config.ts";

/** The policy for one response; `reportPath` is omitted when monitoring is off. With `reportTo`
 * (over HTTPS: Chromium drops an `http:` endpoint, and ignores `report-uri` beside `report-to`),
 * reports also go through the Reporting API, to the `csp` endpoint of `Reporting-Endpoints`. */
export function contentSecurityPolicy(nonce: string, reportPath?: string, reportTo?: boolean) {
  return [
    "default-src 'self'",
    `script-src 'nonce-${nonce}' 'strict-dynamic'`,
    `style-src 'self' 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
    ...reportPath ? [`report-uri ${reportPath}`] : [],
    ...reportPath && reportTo ? ["report-to csp"] : [],
  ].join("; ");
}

/** The app's path for CSP reports (past ad blockers, as the tunnel) and the DSN's security
 * endpoint it forwards them to; none without a DSN, or with the dev inbox (no real ingest). */
export function cspReports(config: Config, release: string) {
  if (config.sentryDsn === undefined || config.devInbox) return undefined;
  const dsn = config.tunnelAllowedDsns[0];
  const query = new URLSearchParams({
    sentry_key: dsn.publicKey,
    sentry_environment: config.sentryEnvironment,
    sentry_release: release,
  });
  return { path: `${config.tunnelPath}/csp`, target: `${ingestUrl(dsn, "security")}?${query}` };
}

/** A fresh 128-bit nonce from the platform's CSPRNG, base64-encoded. */
export function createNonce(): string {
  return crypto.getRandomValues(new Uint8Array(16)).toBase64();
}
