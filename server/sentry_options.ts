/**
 * The app's own options for the server's `Sentry.init` (`beforeSend`, `ignoreErrors`, extra
 * `integrations`...); the DSN, release, environment, sampling and transport are the server's.
 *
 * @example
 * export const sentryOptions: SentryOptions = { ignoreTransactions: ["GET /api/ping"] };
 */
import type { DenoOptions } from "@sentry/deno";

/** The part of `Sentry.init`'s options that the app may set. */
export type SentryOptions = Partial<DenoOptions>;

/** The app's options; none by default. */
export const sentryOptions: SentryOptions = {};
