/** Outgoing `fetch` continues the request's trace: an `http.client` span for each fetch made while
 * a request is handled, and trace headers only to the request's own origin and the SDK's
 * `tracePropagationTargets`. @sentry/deno 10.75.2 traces no fetch (getsentry/sentry-javascript#23891,
 * fixed by #24121 after it): delete this file when its defaults do (its test fails then). */
import {
  addFetchInstrumentationHandler,
  getActiveSpan,
  getClient,
  getIsolationScope,
  instrumentFetchRequest,
  type Span,
  stringMatchesSomePattern,
} from "@sentry/core";

/** The integration, on `@sentry/core`'s fetch instrumentation as the edge SDKs build theirs. */
export function fetchTracingIntegration() {
  const spans: Record<string, Span> = {};
  return {
    name: "FetchTracing",
    setupOnce() {
      addFetchInstrumentationHandler((data) => {
        if (data.endTimestamp === undefined) {
          // Outside a handled request (start-up, the tunnel): left alone. The tunnel and the SDK's
          // transport use the fetch taken before Sentry.init anyway.
          const url = getActiveSpan() && URL.parse(data.fetchData.url);
          if (!url || !/^https?:$/.test(url.protocol)) return;
          // The span names method and URL without query, fragment or credentials (tokens).
          data.fetchData.url = url.origin + url.pathname;
        }
        instrumentFetchRequest(data, () => true, carriesTrace, spans, "auto.http.fetch");
      });
    },
  };
}

// Trace headers are request metadata: a URL gets them only under the handled request's origin or
// a target (anchored patterns, sentry.ts), never by a substring match.
function carriesTrace(url: string): boolean {
  const metadata = getIsolationScope().getScopeData().sdkProcessingMetadata;
  const own = URL.parse((metadata.normalizedRequest as { url?: string } | undefined)?.url ?? "");
  return (own !== null && url.startsWith(`${own.origin}/`)) ||
    stringMatchesSomePattern(url, getClient()?.getOptions().tracePropagationTargets ?? []);
}
