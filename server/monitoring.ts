/**
 * Server-side monitoring with `@sentry/deno`: started once when `SENTRY_DSN` is set.
 *
 * The SDK's automatic `Deno.serve` hook is left out: it wraps every response body in a stream
 * to time it, which cost about 3x throughput on the SSR page. {@link instrumentHandler} does
 * the same job (isolation scope, continued trace, sampled span, error capture) around the
 * app's handler and ends the span when the handler returns its Response.
 */
import * as Sentry from "@sentry/deno";
import type { Handler } from "./app.ts";
import type { Config } from "./config.ts";
import { escapeHtml } from "./render.ts";

/** What the rest of the server needs from monitoring, whether it is on or off. */
export interface Monitoring {
  readonly enabled: boolean;
  /** Wrap the app's handler: one span per request whose path `shouldTrace` accepts. */
  instrumentHandler(
    handler: Handler,
    options: { shouldTrace: (pathname: string) => boolean },
  ): Handler;
  /** Report an error the app caught (it has already answered with a 500). */
  captureError(error: unknown): void;
  /** `<meta>` tags carrying the request's trace, for the browser to continue it. */
  traceMetaTags(req: Request): string;
  /** Send what is queued; resolves false if it did not finish within `timeoutMs`. */
  flush(timeoutMs: number): Promise<boolean>;
}

// DenoServe is replaced by instrumentHandler (see above). NormalizePaths re-parses a stack
// per event when it cannot read the app root, and ContextLines cannot read the server's
// sources under --allow-read=static: about 0.3 ms of CPU per traced request between them.
const LEFT_OUT = new Set(["DenoServe", "NormalizePaths", "ContextLines"]);

const OFF: Monitoring = {
  enabled: false,
  instrumentHandler: (handler) => handler,
  captureError: () => {},
  traceMetaTags: () => "",
  flush: () => Promise.resolve(true),
};

/**
 * Start `@sentry/deno` if the configuration has a DSN; otherwise return a no-op.
 *
 * @example
 * const monitoring = startMonitoring(config, release);
 * Deno.serve(monitoring.instrumentHandler(app, { shouldTrace: (path) => path === "/" }));
 */
export function startMonitoring(
  config: Config,
  release: string,
  /** Where envelopes go instead of the DSN's ingest (the dev inbox). */
  options: { transport?: Sentry.DenoOptions["transport"] } = {},
): Monitoring {
  if (config.sentryDsn === undefined) return OFF;
  Sentry.init({
    dsn: config.sentryDsn,
    transport: options.transport,
    environment: config.sentryEnvironment,
    release,
    tracesSampleRate: config.tracesSampleRate,
    integrations: (defaults) => defaults.filter((i) => !LEFT_OUT.has(i.name)),
    // The app creates its spans itself; OpenTelemetry's tracer bridge only adds cost.
    skipOpenTelemetrySetup: true,
  });
  const rate = config.tracesSampleRate;
  const publicKey = config.tunnelAllowedDsns[0]?.publicKey ?? "";
  // The parts of an unsampled trace's baggage that never change.
  const baggagePrefix = [
    `sentry-environment=${encodeURIComponent(config.sentryEnvironment)}`,
    `sentry-release=${encodeURIComponent(release)}`,
    `sentry-public_key=${encodeURIComponent(publicKey)}`,
  ].join(",");
  const lightTags = new WeakMap<Request, string>();

  const instrumentHandler = (
    handler: Handler,
    options: { shouldTrace: (pathname: string) => boolean },
  ): Handler =>
  (req, info) => {
    const { pathname } = new URL(req.url);
    if (!options.shouldTrace(pathname)) return handler(req, info);
    const incoming = req.headers.get("sentry-trace");
    const sampleRand = Math.random();
    if (incoming === null && sampleRand >= rate) {
      // Most requests are not sampled. Sentry's scopes and spans cost about 75 us per request
      // even then, so this path only makes up the ids the browser needs to continue the trace
      // (head-based sampling: the page load will not be sampled either).
      const traceId = crypto.randomUUID().replaceAll("-", "");
      const spanId = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
      const baggage = `${baggagePrefix},sentry-trace_id=${traceId},sentry-sampled=false,` +
        `sentry-sample_rand=${sampleRand.toFixed(6)},sentry-sample_rate=${rate}`;
      lightTags.set(
        req,
        `<meta name="sentry-trace" content="${traceId}-${spanId}-0">` +
          `<meta name="baggage" content="${escapeHtml(baggage)}">`,
      );
      return handler(req, info);
    }
    return Sentry.withIsolationScope((scope) => {
      scope.setSDKProcessingMetadata({
        normalizedRequest: { method: req.method, url: req.url },
      });
      const span = () =>
        Sentry.startSpan({
          name: `${req.method} ${pathname}`,
          op: "http.server",
          attributes: {
            [Sentry.SEMANTIC_ATTRIBUTE_SENTRY_SOURCE]: "url",
            [Sentry.SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN]: "auto.http.app",
            "http.request.method": req.method,
          },
        }, async (span) => {
          const res = await handler(req, info);
          Sentry.setHttpStatus(span, res.status);
          return res;
        });
      if (incoming !== null) {
        return Sentry.continueTrace(
          { sentryTrace: incoming, baggage: req.headers.get("baggage") },
          span,
        );
      }
      // A new trace whose sampling draw is the one made above, so Sentry's decision agrees.
      Sentry.getCurrentScope().setPropagationContext({
        traceId: crypto.randomUUID().replaceAll("-", ""),
        sampleRand,
      });
      return span();
    });
  };

  return {
    enabled: true,
    instrumentHandler,
    captureError: (error) => Sentry.captureException(error),
    traceMetaTags: (req) => lightTags.get(req) ?? sentryTraceMetaTags(),
    flush: (timeoutMs) => Sentry.flush(timeoutMs),
  };
}

function sentryTraceMetaTags(): string {
  const data = Sentry.getTraceData();
  let tags = "";
  for (const [name, content] of Object.entries(data)) {
    if (content) tags += `<meta name="${escapeHtml(name)}" content="${escapeHtml(content)}">`;
  }
  return tags;
}
