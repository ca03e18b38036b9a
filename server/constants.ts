/** Values shared by several modules; one place to change them. */

/** The Sentry tunnel's path; the browser SDK's `tunnel` option points here. */
export const MONITORING_PATH = "/monitoring";

/** How long shutdown waits for monitoring to send what it has queued. */
export const FLUSH_TIMEOUT_MS = 2_000;
