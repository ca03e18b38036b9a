/**
 * What the server needs from monitoring, and monitoring when no `SENTRY_DSN` is set (every call
 * does nothing). Kept apart from sentry.ts so a server without a DSN never loads `@sentry/deno`
 * (several MB of resident memory for its code), and so the request path can name the type
 * without loading it either.
 */
import type { ContextHandler } from "../http/request_context.ts";

/** What the rest of the server needs from monitoring, whether it is on or off. */
export interface Monitoring {
  /** Wrap a handler of the app's: its requests are traced (named by the context's path). */
  instrumentHandler(handler: ContextHandler): ContextHandler;
  /**
   * Report a fault in the server's own code that the app caught (it has already answered
   * with a 500), as unhandled; at most a few per minute for each distinct error. Inside an
   * instrumented handler the event joins that request's trace; with the request, it names
   * its method and URL.
   */
  captureError(error: unknown, req?: Request): void;
  /** `<meta>` tags carrying the active request's trace, for the browser to continue it. */
  traceMetaTags(): string;
  /** Log what the error limit held back, send what is queued; false if not done in time. */
  flush(timeoutMs: number): Promise<boolean>;
}

/** The no-op {@link Monitoring}. */
export const MONITORING_OFF: Monitoring = {
  instrumentHandler: (handler) => handler,
  captureError: () => {},
  traceMetaTags: () => "",
  flush: () => Promise.resolve(true),
};
