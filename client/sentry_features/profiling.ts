/** Browser profiling, a chunk of its own: loaded only while SENTRY_PROFILES_SAMPLE_RATE is above 0
 * (the server then sends `Document-Policy: js-profiling`, which the profiler needs). */
// The build resolves this to @sentry/browser's profiling module (server/build/sentry_plugin.ts).
import { browserProfilingIntegration } from "@sentry/browser";
import { addIntegration } from "../monitoring.ts";

/** Profile the page load, if it is still going, and each later trace the rate picks. */
export function startProfiling(): void {
  addIntegration(browserProfilingIntegration());
}
