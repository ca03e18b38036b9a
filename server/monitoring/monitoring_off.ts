/**
 * Monitoring when no `SENTRY_DSN` is set: every call does nothing. A module of its own, so a
 * server without a DSN never loads `@sentry/deno` (about 15 MB of resident memory for its code).
 */
import type { Monitoring } from "./sentry.ts";

/** The no-op {@link Monitoring}. */
export const MONITORING_OFF: Monitoring = {
  enabled: false,
  instrumentHandler: (handler) => handler,
  captureError: () => {},
  traceMetaTags: () => "",
  flush: () => Promise.resolve(true),
};
