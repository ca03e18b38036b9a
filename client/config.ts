/**
 * The settings the server serializes into the page (`<script id="app-config">`), so one build
 * runs in every environment.
 */

/** Browser monitoring settings; absent when the server has no DSN. */
export interface SentryClientConfig {
  readonly dsn: string;
  readonly environment: string;
  readonly release: string;
  readonly tracesSampleRate: number;
  readonly tunnel: string;
}

/** Everything the browser is told at start-up. */
export interface ClientConfig {
  readonly sentry?: SentryClientConfig;
}

/** Read the page's configuration; a missing or broken element means "no settings". */
export function readClientConfig(doc: Document = document): ClientConfig {
  const text = doc.getElementById("app-config")?.textContent;
  if (!text) return {};
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null ? value : {};
  } catch {
    return {};
  }
}
