/** Sentry's logger, a chunk of its own: loaded only with SENTRY_ENABLE_LOGS. */
export { logger } from "@sentry/react";
