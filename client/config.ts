/** The settings the server serializes into the page, so one build runs in every environment. */

/** Browser monitoring settings, named as `Sentry.init`'s options; absent when the server has no
 * DSN. */
export interface SentryClientConfig {
  readonly dsn: string;
  readonly environment: string;
  readonly release: string;
  readonly tracesSampleRate: number;
  readonly tunnel: string;
  // Sentry's optional features, each present only while its setting is on (docs/sentry.md).
  readonly replaysSessionSampleRate?: number;
  readonly replaysOnErrorSampleRate?: number;
  /** Replay's compression worker: a same-origin build file, so the CSP needs no `blob:`. */
  readonly replayWorker?: string;
  readonly profilesSampleRate?: number;
  readonly enableLogs?: boolean;
  readonly feedback?: boolean;
}

/** Everything the browser is told at start-up. */
export interface ClientConfig {
  readonly sentry?: SentryClientConfig;
  /** The server's `PUBLIC_*` variables, read when it started. */
  readonly public?: Readonly<Record<string, string>>;
}

/** Read the page's configuration; a missing or broken element means "no settings". */
export function readClientConfig(doc: Document = document): ClientConfig {
  const value = readJson(doc, "app-config");
  return typeof value === "object" && value !== null ? value as ClientConfig : {};
}

/** The data the page's loader gave the server's render; `undefined` for a page without one. */
export function readPageData(doc: Document = document): unknown {
  return readJson(doc, "page-data");
}

// A JSON element of the page, never executed.
function readJson(doc: Document, id: string): unknown {
  const text = doc.getElementById(id)?.textContent;
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The server's `PUBLIC_*` environment variables as read at start-up: settings browser code may see
 * (an API origin, a feature flag). No other variable is ever sent to the page.
 *
 * @example
 * const apiOrigin = publicConfig().PUBLIC_API_ORIGIN ?? location.origin;
 */
export function publicConfig(): Readonly<Record<string, string>> {
  return (publicValues ??= readClientConfig().public ?? {});
}

let publicValues: Readonly<Record<string, string>> | undefined;
