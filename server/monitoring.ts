/**
 * Server-side monitoring with `@sentry/deno`: started once when `SENTRY_DSN` is set.
 *
 * The SDK's automatic `Deno.serve` hook is left out: it wraps every response body in a stream
 * to time it, which cost about 3x throughput on the SSR page. {@link instrumentHandler} does
 * the same job (isolation scope, continued trace, sampled span, error capture) around the
 * app's handler and ends the span when the handler returns its Response.
 *
 * Clients are not trusted with its cost: an incoming "sampled" trace is honoured only within a
 * small budget (trace_budget.ts), and error events are limited per distinct error
 * (error_throttle.ts), so neither a header nor an error storm multiplies what is sent.
 */
import * as Sentry from "@sentry/deno";
import type { Handler } from "./app.ts";
import type { Config } from "./config.ts";
import {
  errorKey,
  ErrorThrottle,
  type ErrorThrottleOptions,
  formatSuppressed,
} from "./error_throttle.ts";
import { escapeHtml } from "./render.ts";
import { parseSentryTrace } from "./sentry_trace.ts";
import { decideSampling, DEFAULT_TRACE_BUDGET, TokenBucket } from "./trace_budget.ts";

/** What the rest of the server needs from monitoring, whether it is on or off. */
export interface Monitoring {
  readonly enabled: boolean;
  /** Wrap the app's handler: one span per request whose path `shouldTrace` accepts. */
  instrumentHandler(
    handler: Handler,
    options: { shouldTrace: (pathname: string) => boolean },
  ): Handler;
  /**
   * Report a fault in the server's own code that the app caught (it has already answered
   * with a 500), as unhandled; at most a few per minute for each distinct error.
   */
  captureError(error: unknown): void;
  /** `<meta>` tags carrying the request's trace, for the browser to continue it. */
  traceMetaTags(req: Request): string;
  /** Log what the error limit held back, send what is queued; false if not done in time. */
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

/** What {@link startMonitoring} can be given besides the configuration; all optional. */
export interface MonitoringOptions {
  /** Where envelopes go instead of the DSN's ingest (the dev inbox). */
  readonly transport?: Sentry.DenoOptions["transport"];
  /** How many incoming "sampled" traces are honoured beyond the server's own sample rate. */
  readonly traceBudget?: { readonly perSecond: number; readonly burst: number };
  /** How many error events each distinct error may send. */
  readonly errorLimit?: ErrorThrottleOptions;
  /** Milliseconds on a monotonic clock, for the budget and the error limit. */
  readonly now?: () => number;
  /** Where the line about suppressed error events goes; `console.warn` by default. */
  readonly log?: (line: string) => void;
}

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
  options: MonitoringOptions = {},
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
  const now = options.now ?? (() => performance.now());
  const budget = new TokenBucket(options.traceBudget ?? DEFAULT_TRACE_BUDGET, now());
  const takeToken = () => budget.take(now());
  const throttle = new ErrorThrottle(options.errorLimit, now());
  const log = options.log ?? ((line: string) => console.warn(line));
  const logSuppressed = (force: boolean) => {
    const suppressed = throttle.report(now(), force);
    const line = suppressed && formatSuppressed(suppressed);
    if (line) log(line);
  };

  const instrumentHandler = (
    handler: Handler,
    options: { shouldTrace: (pathname: string) => boolean },
  ): Handler =>
  (req, info) => {
    const { pathname } = new URL(req.url);
    if (!options.shouldTrace(pathname)) return handler(req, info);
    const header = req.headers.get("sentry-trace");
    // Malformed headers count as absent: a client's typo never fails the request.
    const parent = header === null ? undefined : parseSentryTrace(header);
    const sampleRand = Math.random();
    const decision = decideSampling(parent?.sampled, sampleRand < rate, takeToken);
    const traceId = parent?.traceId ?? crypto.randomUUID().replaceAll("-", "");
    if (decision === "none") {
      // Most requests are not sampled. Sentry's scopes and spans cost about 75 us per request
      // even then, so this path only makes up the ids the browser needs to continue the trace
      // (head-based sampling: the page load will not be sampled either).
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
      // The decision made above, handed to Sentry: an inherited one as the parent's "sampled",
      // the server's own as the draw Sentry compares with the rate (so both agree). The
      // incoming baggage is not used: its values would be the client's word in our events.
      Sentry.getCurrentScope().setPropagationContext({
        traceId,
        parentSpanId: parent?.parentSpanId,
        sampled: decision === "inherited" ? true : undefined,
        sampleRand,
      });
      return Sentry.startSpan({
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
    });
  };

  const captureError = (error: unknown) => {
    logSuppressed(false);
    if (!throttle.admit(errorKey(error), now())) return;
    // Unhandled: the app only catches it to answer with a generic 500 page.
    Sentry.captureException(error, { mechanism: { type: "auto.http.deno", handled: false } });
  };

  return {
    enabled: true,
    instrumentHandler,
    captureError,
    traceMetaTags: (req) => lightTags.get(req) ?? sentryTraceMetaTags(),
    flush: (timeoutMs) => {
      logSuppressed(true);
      return Sentry.flush(timeoutMs);
    },
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
