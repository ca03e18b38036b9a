/**
 * Browser monitoring with `@sentry/react`, loaded as its own chunk right after hydration
 * starts so the JavaScript needed before hydration stays small.
 */
import { browserTracingIntegration, captureException, init, withScope } from "@sentry/react";
import type { SentryClientConfig } from "./config.ts";
import type { ErrorBuffer } from "./error_buffer.ts";

/** Start the SDK, then send whatever the buffer caught while this chunk was loading. */
export function startMonitoring(config: SentryClientConfig, buffer: ErrorBuffer): void {
  init({
    dsn: config.dsn,
    environment: config.environment,
    release: config.release,
    // Same-origin, so ad blockers and `connect-src 'self'` do not drop events.
    tunnel: config.tunnel,
    tracesSampleRate: config.tracesSampleRate,
    integrations: [browserTracingIntegration()],
  });
  // Sentry's global handlers now see new uncaught errors; ours would report them twice.
  buffer.attach((error, context) => {
    withScope((scope) => {
      if (context.componentStack) {
        scope.setContext("react", { componentStack: context.componentStack });
      }
      captureException(error, { mechanism: { type: context.mechanism, handled: context.handled } });
    });
  }, { stopListening: true });
}
