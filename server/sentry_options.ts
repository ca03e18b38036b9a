/**
 * The app's own options for the server's `Sentry.init` (when `SENTRY_DSN` is set): filters and
 * hooks such as `beforeSend`, `ignoreErrors`, `ignoreTransactions`, `sendDefaultPii`, extra
 * `integrations`. The DSN, release, environment, sampling and transport are the server's.
 *
 * @example
 * export const sentryOptions: SentryOptions = {
 *   ignoreTransactions: ["GET /api/ping"],
 * };
 */
import type { DenoOptions } from "@sentry/deno";

/** The part of `Sentry.init`'s options that the app may set. */
export type SentryOptions = Partial<DenoOptions>;

/** The app's options; none by default. */
export const sentryOptions: SentryOptions = {};
