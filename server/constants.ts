/** Values shared by several modules; one place to change them. */

/** The Sentry tunnel's path; the browser SDK's `tunnel` option points here. */
export const MONITORING_PATH = "/monitoring";

/** How long shutdown waits for monitoring to send what it has queued. */
export const FLUSH_TIMEOUT_MS = 2_000;

/** Where the development-only pages and endpoints live (never routed in production). */
export const DEV_PATHS = {
  /** Server-Sent Events: `hello`, `reload` and `build-error`. */
  reload: "/_dev/reload",
  /** The script that listens to them and shows build errors over the page. */
  client: "/_dev/client.js",
  /** The monitoring inbox page. */
  inbox: "/_dev/inbox",
} as const;

/**
 * The DSN both SDKs use when monitoring goes to the dev inbox. `.invalid` can never resolve,
 * so nothing ever leaves the machine: the tunnel hands these envelopes to the inbox directly.
 */
export const DEV_INBOX_DSN = "http://dev@inbox.invalid/0";
