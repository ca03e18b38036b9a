/** Browser monitoring with `@sentry/react`, its own chunk so that hydration waits for less. */
import {
  browserTracingIntegration,
  captureException,
  captureMessage,
  init,
  setUser,
  startInactiveSpan,
  startSpan,
  withScope,
} from "@sentry/react";
import { linkComponentStack } from "./component_stack.ts";
import type { SentryClientConfig } from "./config.ts";
import type { ErrorBuffer } from "./error_buffer.ts";
import { attachSdk } from "./sentry.ts";

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
        // Linked as the error's cause so Sentry symbolicates it; the raw text stays readable too.
        linkComponentStack(error, context.componentStack);
        scope.setContext("react", { componentStack: context.componentStack });
      }
      // Not a `mechanism` hint: the SDK puts that on the first exception, the linked stack.
      const mechanism = { type: context.mechanism, handled: context.handled };
      scope.addEventProcessor((event) => {
        const main = event.exception?.values?.at(-1);
        if (main) main.mechanism = { ...main.mechanism, ...mechanism };
        return event;
      });
      captureException(error);
    });
  }, { stopListening: true });
  attachSdk({ captureException, captureMessage, setUser, startSpan, startInactiveSpan });
}
