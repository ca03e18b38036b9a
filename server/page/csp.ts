/** CSP for HTML: scripts only with the request's nonce ('strict-dynamic' loads their chunks), all
 * else same-origin; `connect-src 'self'` suffices as the browser SDK posts to the tunnel, and
 * `worker-src 'self'` admits Replay's compression worker (nonces do not apply to workers). */
import { type Dsn, ingestUrl } from "../dsn.ts";

/** The policy for one response; `reportUri` is omitted when monitoring is off. */
export function contentSecurityPolicy(nonce: string, reportUri?: string): string {
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
    ...reportUri ? [`report-uri ${reportUri}`] : [],
  ].join("; ");
}

/** Sentry's CSP report endpoint for a DSN (`report-uri` is not limited by `connect-src`). */
export function sentryCspReportUri(
  dsn: Dsn,
  tags: { environment: string; release: string },
): string {
  const query = new URLSearchParams({
    sentry_key: dsn.publicKey,
    sentry_environment: tags.environment,
    sentry_release: tags.release,
  });
  return `${ingestUrl(dsn, "security")}?${query}`;
}

/** A fresh 128-bit nonce from the platform's CSPRNG, base64-encoded. */
export function createNonce(): string {
  return crypto.getRandomValues(new Uint8Array(16)).toBase64();
}
