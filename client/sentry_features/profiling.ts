/** Browser profiling, a chunk of its own: loaded only while SENTRY_PROFILES_SAMPLE_RATE is above 0
 * (the server then sends `Document-Policy: js-profiling`, which the profiler needs). */
import { addIntegration, browserProfilingIntegration } from "@sentry/react";

/** Profile the page load, if it is still going, and each later trace the rate picks. */
export function startProfiling(): void {
  addIntegration(browserProfilingIntegration());
}
