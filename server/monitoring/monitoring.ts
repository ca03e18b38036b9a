/** What the server needs from monitoring, and the no-op without `SENTRY_DSN`: apart from sentry.ts
 * so a server without a DSN never loads `@sentry/deno` (several MB of memory). */
import type { ContextHandler } from "../http/request_context.ts";

/** What the rest of the server needs from monitoring, whether it is on or off. */
export interface Monitoring {
  /** Wrap an app handler: its requests are traced, named by the context's path. */
  instrumentHandler(handler: ContextHandler): ContextHandler;
  /** Report a fault answered with a 500 (a few a minute per error); `req` names method and URL. */
  captureError(error: unknown, req?: Request): void;
  /** `<meta>` tags carrying the active request's trace, for the browser to continue it. */
  traceMetaTags(): string;
  /** Log what the error limit held back and send what is queued; false if not done in time. */
  flush(timeoutMs: number): Promise<boolean>;
}

/** The no-op {@link Monitoring}. */
export const MONITORING_OFF: Monitoring = {
  instrumentHandler: (handler) => handler,
  captureError: () => {},
  traceMetaTags: () => "",
  flush: () => Promise.resolve(true),
};
