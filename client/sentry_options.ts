/**
 * The app's own options for the browser's `Sentry.init` (`beforeSend`, `ignoreErrors`, extra
 * `integrations`...), and for Replay and Feedback when their settings are on; the DSN, release,
 * environment, tunnel and sample rates are the shell's (SENTRY_* variables), as are Replay's worker
 * and Feedback's nonces.
 *
 * @example
 * export const sentryOptions: SentryOptions = { ignoreErrors: [/^ResizeObserver loop/] };
 * export const replayOptions: ReplayOptions = { maskAllText: false };
 */
import type { BrowserOptions, feedbackIntegration, replayIntegration } from "@sentry/react";

/** The part of `Sentry.init`'s options that the app may set. */
export type SentryOptions = Partial<BrowserOptions>;
/** `replayIntegration`'s options. */
export type ReplayOptions = NonNullable<Parameters<typeof replayIntegration>[0]>;
/** `feedbackIntegration`'s options (labels, theme, `showBranding`...). */
export type FeedbackOptions = NonNullable<Parameters<typeof feedbackIntegration>[0]>;

/** The app's options; none by default. */
export const sentryOptions: SentryOptions = {};
/** Used with SENTRY_REPLAYS_SESSION_SAMPLE_RATE or SENTRY_REPLAYS_ON_ERROR_SAMPLE_RATE. */
export const replayOptions: ReplayOptions = {};
/** Used with SENTRY_FEEDBACK. */
export const feedbackOptions: FeedbackOptions = {};
