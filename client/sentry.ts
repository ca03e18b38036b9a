/**
 * Sentry for the app's browser code. Calls made before the SDK chunk is up (monitoring.ts) are
 * queued and replayed, spans with their real times; without a DSN they do nothing.
 *
 * @example
 * import * as Sentry from "../sentry.ts";
 * Sentry.captureMessage("checkout clicked");
 * await Sentry.startSpan({ name: "load cart" }, () => fetch("/api/cart"));
 */
import type * as SDK from "@sentry/react";

type Sdk = Pick<
  typeof SDK,
  "captureException" | "captureMessage" | "setUser" | "startSpan" | "startInactiveSpan"
>;

// Calls waiting for the SDK, at most this many (what a broken page could pile up before load).
const MAX_QUEUED = 100;
let sdk: Sdk | undefined;
let queue: ((sdk: Sdk) => void)[] | undefined = [];

function call(action: (sdk: Sdk) => void): void {
  if (sdk) action(sdk);
  else if (queue && queue.length < MAX_QUEUED) queue.push(action);
}

/** Report an error, as handled. */
export function captureException(error: unknown): void {
  call((sdk) => sdk.captureException(error));
}

/** Report a message (`info` unless said otherwise). */
export function captureMessage(message: string, level: SDK.SeverityLevel = "info"): void {
  call((sdk) => sdk.captureMessage(message, level));
}

/** The user that later events belong to; `null` forgets it. */
export function setUser(user: SDK.User | null): void {
  call((sdk) => sdk.setUser(user));
}

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
