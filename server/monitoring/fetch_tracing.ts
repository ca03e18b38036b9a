/** Outgoing `fetch` continues the request's trace: an `http.client` span for each fetch made while
 * a request is handled, trace headers only to `tracePropagationTargets` (sentry.ts), redirects
 * included. @sentry/deno 10.75.2 traces no fetch (getsentry/sentry-javascript#23891, fixed by
 * #24121 after it): delete this file when its defaults do (its test fails then). */
import {
  addFetchInstrumentationHandler,
  getActiveSpan,
  getClient,
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
          // Outside a handled request (start-up, the delivery queue's sends): left alone.
          const url = getActiveSpan() && traceable(data.fetchData.url);
          if (!url) return;
          data.fetchData.url = url;
        }
        instrumentFetchRequest(data, () => true, carriesTrace, spans, "auto.http.fetch");
      });
      globalThis.fetch = followingRedirects(globalThis.fetch);
    },
  };
}

// The URL spans name and targets match, alike for handler and wrapper: http(s) only, normalised
// (`HTTPS://Host:443/x` is `https://host/x`), without query, fragment or credentials (tokens).
function traceable(url: string): string | undefined {
  const parsed = URL.parse(url);
  return parsed && /^https?:$/.test(parsed.protocol) ? parsed.origin + parsed.pathname : undefined;
}

// Trace headers are request metadata: a URL gets them only under a target (anchored patterns,
// sentry.ts), never by a substring match.
function carriesTrace(url: string): boolean {
  return stringMatchesSomePattern(url, getClient()?.getOptions().tracePropagationTargets ?? []);
}

// The fetch standard keeps every header across redirects: a fetch given trace headers follows its
// redirects here instead, each hop a fetch of its own, checked against the targets again.
function followingRedirects(instrumented: typeof fetch): typeof fetch {
  return async (input, init) => {
    // Read without building a Request, which would take a Request's body (and drop `client`).
    let url = input instanceof Request ? input.url : String(input);
    const mode = init?.redirect ?? (input instanceof Request ? input.redirect : "follow");
    const target = traceable(url);
    if (mode !== "follow" || !getActiveSpan() || !target || !carriesTrace(target)) {
      return instrumented(input, init);
    }
    const first = new Request(input, init);
    const body = first.body && await first.arrayBuffer();
    let [method, headers] = [first.method, new Headers(first.headers)];
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const again = { method, headers, body: method === first.method ? body : null };
      const res = await instrumented(url, { ...again, redirect: "manual", signal: first.signal });
      const location = res.headers.get("location");
      if (!REDIRECT.has(res.status) || location === null) return res;
      await res.body?.cancel();
      const next = new URL(location, url);
      // As the fetch standard: a redirect off http(s) (file:, data:) is a network error.
      if (!traceable(next.href)) throw new TypeError(`redirect to a ${next.protocol} URL`);
      // As the fetch standard: a 303 (or a POST's 301/302) is a GET; credentials stay at the origin.
      if (res.status === 303 || (res.status < 303 && method === "POST")) method = "GET";
      if (next.origin !== new URL(url).origin) headers.delete("authorization");
      url = next.href;
    }
    throw new TypeError(`more than ${MAX_REDIRECTS} redirects`);
  };
}

const [REDIRECT, MAX_REDIRECTS] = [new Set([301, 302, 303, 307, 308]), 20]; // as fetch's
