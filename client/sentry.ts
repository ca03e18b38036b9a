/**
 * Sentry for the app's browser code: import this, never `@sentry/react` (the build refuses it,
 * as it would load the whole SDK before hydration). Calls made before the SDK chunk is up
 * (monitoring.ts) are queued and replayed, spans with their real times; without a DSN they do
 * nothing.
 *
 * @example
 * import * as Sentry from "../sentry.ts";
 * Sentry.captureMessage("checkout clicked");
 * Sentry.logger.info("cart loaded", { items: 3 });
 * await Sentry.startSpan({ name: "load cart" }, () => fetch("/api/cart"));
 */
import type * as SDK from "@sentry/react";

const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
/** A log's severity, as `Sentry.logger` names them. */
export type LogLevel = (typeof LEVELS)[number];

type Sdk =
  & Pick<
    typeof SDK,
    | "captureException"
    | "captureMessage"
    | "setUser"
    | "setTag"
    | "setContext"
    | "addBreadcrumb"
    | "withScope"
    | "startSpan"
    | "startInactiveSpan"
  >
  & {
    log(level: LogLevel, message: string, attributes?: Record<string, unknown>): void;
    openFeedbackForm(): void;
  };

// Calls waiting for the SDK, at most this many (what a broken page could pile up before load).
const MAX_QUEUED = 100;
let sdk: Sdk | undefined;
let queue: ((sdk: Sdk) => void)[] | undefined = [];

function call(action: (sdk: Sdk) => void): void {
  if (sdk) action(sdk);
  else if (queue && queue.length < MAX_QUEUED) queue.push(action);
}

/** Report an error, as handled. */
export const captureException = (error: unknown): void =>
  call((sdk) => sdk.captureException(error));

/** Report a message (`info` unless said otherwise). */
export const captureMessage = (message: string, level: SDK.SeverityLevel = "info"): void =>
  call((sdk) => sdk.captureMessage(message, level));

/** The user that later events belong to; `null` forgets it. */
export const setUser = (user: SDK.User | null): void => call((sdk) => sdk.setUser(user));

/** A tag on later events (searchable in Sentry). */
export const setTag = (key: string, value: Parameters<typeof SDK.setTag>[1]): void =>
  call((sdk) => sdk.setTag(key, value));

/** A named block of data on later events; `null` removes it. */
export const setContext = (name: string, context: Record<string, unknown> | null): void =>
  call((sdk) => sdk.setContext(name, context));

/** A step that later events show in their trail. */
export const addBreadcrumb = (breadcrumb: SDK.Breadcrumb): void =>
  call((sdk) => sdk.addBreadcrumb(breadcrumb));

/** Run `callback` with a scope of its own: what it sets stays with what it reports. */
export const withScope = (callback: (scope: SDK.Scope) => void): void =>
  call((sdk) => sdk.withScope(callback));

/** Time `callback` (its promise, if it returns one) as a span under the page's active span. */
export function startSpan<T>(options: { name: string; op?: string }, callback: () => T): T {
  if (sdk) return sdk.startSpan(options, callback);
  const startTime = Date.now() / 1000;
  const record = () => {
    const endTime = Date.now() / 1000;
    call((sdk) => sdk.startInactiveSpan({ ...options, startTime }).end(endTime));
  };
  const result = callback();
  if (result instanceof Promise) return result.finally(record) as T;
  record();
  return result;
}

type Log = (message: string, attributes?: Record<string, unknown>) => void;
const log = (level: LogLevel): Log => (message, attributes) =>
  call((sdk) => sdk.log(level, message, attributes));

/** Structured logs in the page's trace, sent with `SENTRY_ENABLE_LOGS` (else dropped). */
export const logger: Readonly<Record<LogLevel, Log>> = Object.fromEntries(
  LEVELS.map((level) => [level, log(level)]),
) as Record<LogLevel, Log>;

/** Open Sentry's feedback form, with `SENTRY_FEEDBACK` (else nothing happens). */
export const openFeedbackForm = (): void => call((sdk) => sdk.openFeedbackForm());

/** Called by monitoring.ts once the SDK is up: replay what waited, then call it directly. */
export function attachSdk(loaded: Sdk): void {
  sdk = loaded;
  for (const action of queue ?? []) action(loaded);
  queue = undefined;
}

/** Called when monitoring is off: nothing will ever be sent, so nothing is kept. */
export function disable(): void {
  queue = undefined;
}
