/** Browser monitoring with `@sentry/react`, its own chunk so that hydration waits for less. */
import {
  addBreadcrumb,
  addIntegration,
  browserTracingIntegration,
  captureException,
  captureMessage,
  init,
  makeBrowserOfflineTransport,
  makeFetchTransport,
  setContext,
  setTag,
  setUser,
  startInactiveSpan,
  startSpan,
  withScope,
} from "@sentry/react";
import { linkComponentStack } from "./component_stack.ts";
import type { SentryClientConfig } from "./config.ts";
import type { ErrorBuffer } from "./error_buffer.ts";
import { attachSdk } from "./sentry.ts";
import { feedbackOptions, replayOptions, sentryOptions } from "./sentry_options.ts";

// For the products' chunks: taking the SDK through this module keeps all of it in one chunk.
export { addIntegration };

// Taken before `init` wraps fetch: the SDK's own posts are not the page's requests.
const pageFetch = globalThis.fetch.bind(globalThis);
/** The tunnel's 503 (its queue is full) and 408 (upload cut off) as failed sends, which the
 * offline transport keeps in IndexedDB and sends again; any other answer is final. */
const tunnelFetch: typeof fetch = async (url, init) => {
  const res = await pageFetch(url, init);
  if (res.status === 503 || res.status === 408) throw new TypeError(`tunnel ${res.status}`);
  return res;
};
const offlineTransport = makeBrowserOfflineTransport((o) => makeFetchTransport(o, tunnelFetch));
// The SDK keeps 30: the session's update (on the first error) and Replay's segments would take
// the room of 30 errors thrown offline. A few MB of IndexedDB at most.
const keep = { maxQueueSize: 100, flushAtStartup: true };

/** Start the SDK, then send whatever the buffer caught while this chunk was loading. */
export function startMonitoring(config: SentryClientConfig, buffer: ErrorBuffer): void {
  // The page's settings are named as Sentry's options; the app's own come first, so they lose.
  const { replayWorker, feedback, ...options } = config;
  init({
    transport: (o) => offlineTransport({ ...o, ...keep }),
    ...sentryOptions,
    ...options,
    integrations: [
      browserTracingIntegration(),
      ...(Array.isArray(sentryOptions.integrations) ? sentryOptions.integrations : []),
    ],
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

  // Each product is a chunk of its own, fetched only while its setting is on.
  if (replayWorker) {
    import("./sentry_features/replay.ts").then((m) => m.startReplay(replayOptions, replayWorker));
  }
  if (options.profilesSampleRate) {
    import("./sentry_features/profiling.ts").then((m) => m.startProfiling());
  }
  const logs = options.enableLogs ? import("./sentry_features/logs.ts") : undefined;
  const feedbackForm = feedback
    ? import("./sentry_features/feedback.ts").then((m) => m.startFeedback(feedbackOptions))
    : undefined;

  attachSdk({
    captureException,
    captureMessage,
    setUser,
    setTag,
    setContext,
    addBreadcrumb,
    withScope,
    startSpan,
    startInactiveSpan,
    // Chained on their chunk's promise, so calls keep their order while it loads.
    log: (level, message, attributes) =>
      void logs?.then((m) => m.logger[level](message, attributes)),
    openFeedbackForm: () => void feedbackForm?.then((open) => open()),
  });
}
