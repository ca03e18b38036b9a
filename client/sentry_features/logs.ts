/** Sentry's logger, a chunk of its own: loaded only with SENTRY_ENABLE_LOGS. */
import "../monitoring.ts"; // as the other products' chunks do: keeps the SDK in one chunk
// The build resolves this to @sentry/core's logger module (server/build/sentry_plugin.ts).
export { logger } from "@sentry/core";
