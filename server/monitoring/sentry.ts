/**
 * The server's Sentry reporting and tracing, on `@sentry/deno`: started once when `SENTRY_DSN`
 * is set (monitoring.ts is the no-op when it is not).
 *
 * Each request to an app handler (pages, API routes, the debug route) runs in its own isolation
 * scope, continues the client's trace, and has its transaction as the active span while the
 * handler runs: app code's `Sentry.setTag`, `setUser` and `startSpan` stay with that request.
 * Sampling is the SDK's (one `sample_rand` per trace, the incoming dynamic sampling context
 * frozen); a client's "sampled" flag is honoured only within a small budget (trace_budget.ts).
 * The tunnel, static files, 404s and /healthz are never wrapped, so never traced.
 */
import * as Sentry from "@sentry/deno";
import type { ContextHandler } from "../http/request_context.ts";
import type { Config } from "../lifecycle/config.ts";
import {
  errorKey,
  ErrorThrottle,
  type ErrorThrottleOptions,
  formatSuppressed,
} from "../error_throttle.ts";
import { reportable } from "./reportable.ts";
import { DEFAULT_TRACE_BUDGET, TokenBucket, withinBudget } from "./trace_budget.ts";
import { escapeHtml } from "../http/html.ts";
import { splitTransport } from "./transport.ts";
import type { Monitoring } from "./monitoring.ts";

export type { Monitoring };

/** How often what the SDK dropped is reported to Sentry, as @sentry/node does. */
const CLIENT_REPORT_INTERVAL_MS = 60_000;

/** Longest string value (an exception's message, for one) an event carries. */
export const MAX_VALUE_LENGTH = 8 * 1024;

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
  /** The app's root folder (a `file:` URL ending in `/`), which stack frames are made relative to. */
  readonly appRoot?: string;
  /**
   * The app's own SDK options (server/sentry_options.ts): `beforeSend`, `beforeSendTransaction`,
   * `ignoreErrors`, `ignoreTransactions`, extra `integrations` and the like. The DSN, release,
   * environment, transport and sampling stay the server's.
   */
  readonly sentryOptions?: Partial<Sentry.DenoOptions>;
}

/**
 * Start `@sentry/deno` with the configuration's DSN and return the server's handle on it.
 *
 * @example
 * const monitoring = startMonitoring(config, release);
 * const page = monitoring.instrumentHandler(pageHandler); // page(req, info, ctx)
 */
export function startMonitoring(
  config: Config,
  release: string,
  options: MonitoringOptions = {},
): Monitoring {
  const now = options.now ?? (() => performance.now());
  const budget = new TokenBucket(options.traceBudget ?? DEFAULT_TRACE_BUDGET, now());
  const takeToken = () => budget.take(now());
  const app = options.sentryOptions ?? {};
  const root = new URL(options.appRoot ?? new URL("../../", import.meta.url).href).pathname;
  const client = Sentry.init({
    ...app,
    dsn: config.sentryDsn,
    environment: config.sentryEnvironment,
    release,
    // Without a tracesSampler, so that a parent's decision keeps the head's sample rate in the
    // sampling context (a sampler's answer would replace it); the budget acts on the header.
    tracesSampleRate: config.tracesSampleRate,
    transport: options.transport ?? splitTransport,
    // No cookies, Authorization or client address unless the app opts in (sentry_options.ts).
    sendDefaultPii: app.sendDefaultPii ?? false,
    // A message can carry a client's input of any length (`new URL(input)` quotes it whole);
    // unset, the SDK sends it all (a 5 MB message made a 5 MB event).
    maxValueLength: MAX_VALUE_LENGTH,
    // Count what the SDK drops, to send in client reports (see sendClientReport).
    sendClientReports: app.sendClientReports ?? true,
    // The SDK's defaults, less what this server never runs: the `Deno.serve` wrapper (requests
    // are wrapped below, cheaper and without re-chunking every answer), database and framework
    // instrumentations, and context lines (frames are rewritten to app:///, see below).
    defaultIntegrations: false,
    integrations: [
      Sentry.eventFiltersIntegration(),
      Sentry.requestDataIntegration(),
      Sentry.functionToStringIntegration(),
      Sentry.linkedErrorsIntegration(),
      Sentry.dedupeIntegration(),
      Sentry.breadcrumbsIntegration(),
      Sentry.denoContextIntegration(),
      Sentry.globalHandlersIntegration(),
      // Turns on the SDK's AsyncLocalStorage scopes (without it every request would share one
      // scope) and traces `node:http` clients that npm packages use.
      Sentry.denoHttpIntegration(),
      // Frames relative to the app's root, so an issue groups alike on every host.
      Sentry.rewriteFramesIntegration({ root, prefix: "app:///" }),
      ...(Array.isArray(app.integrations) ? app.integrations : []),
    ],
  });

  // What the SDK dropped (a full send buffer, a rate limit, a filter) is counted by its client
  // but sent only when a client report is flushed, which @sentry/deno's client never does
  // (Node's does every minute and at exit). Here: at every flush, and with the first envelope
  // a minute after the last report (no timer of its own to keep the process busy).
  const flushOutcomes = client as unknown as { _flushOutcomes?: () => void } | undefined;
  let reportedAt = now();
  const sendClientReport = () => {
    reportedAt = now();
    flushOutcomes?._flushOutcomes?.();
  };
  client?.on("flush", sendClientReport);
  client?.on("beforeEnvelope", () => {
    if (now() - reportedAt >= CLIENT_REPORT_INTERVAL_MS) sendClientReport();
  });

  const throttle = new ErrorThrottle(options.errorLimit, now());
  const log = options.log ?? ((line: string) => console.warn(line));
  const logSuppressed = (force: boolean) => {
    const suppressed = throttle.report(now(), force);
    const line = suppressed &&
      formatSuppressed(
        suppressed,
        (n) => `monitoring: ${n} error events suppressed by the rate limit`,
      );
    if (line) log(line);
  };

  // Each request in its own isolation scope, continuing the client's trace (withIsolationScope
  // starts a fresh one when there is none to continue), with its span active while it runs.
  const instrumentHandler = (handler: ContextHandler): ContextHandler => (req, info, ctx) =>
    Sentry.withIsolationScope((scope) => {
      const url = withoutQuery(req.url);
      scope.setSDKProcessingMetadata({ normalizedRequest: requestData(req, url) });
      const span = () =>
        Sentry.startSpan({
          name: `${req.method} ${ctx.path}`,
          op: "http.server",
          attributes: {
            [Sentry.SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN]: "auto.http.deno",
            // Only declared routes are wrapped, so the path is a route, never a client's string.
            [Sentry.SEMANTIC_ATTRIBUTE_SENTRY_SOURCE]: "route",
            "http.request.method": req.method,
            "url.full": url,
            "url.path": ctx.path,
            "server.address": new URL(url).hostname,
          },
        }, (span) => {
          const answered = (res: Response) => {
            Sentry.setHttpStatus(span, res.status);
            return res;
          };
          const res = handler(req, info, ctx);
          return res instanceof Promise ? res.then(answered) : answered(res);
        });
      const sentryTrace = req.headers.get("sentry-trace");
      if (sentryTrace === null) return span();
      return Sentry.continueTrace({
        sentryTrace: withinBudget(sentryTrace, takeToken),
        baggage: req.headers.get("baggage"),
      }, span);
    });

  const captureError = (error: unknown, req?: Request) => {
    logSuppressed(false);
    if (!throttle.admit(errorKey(error), now())) return;
    Sentry.withScope((scope) => {
      // Inside a wrapped handler the isolation scope names the request already; elsewhere (a
      // static file, a 404 page) the request is set here.
      if (req !== undefined && Sentry.getActiveSpan() === undefined) {
        scope.setSDKProcessingMetadata({
          normalizedRequest: requestData(req, withoutQuery(req.url)),
        });
      }
      // Unhandled: the app only caught it to answer with a generic 500 page. The SDK gets a
      // value it can read whole (reportable.ts): a Symbol, a getter that throws or an
      // AggregateError of thousands must not stall it or the server.
      Sentry.captureException(reportable(error), {
        mechanism: { type: "auto.http.deno", handled: false },
      });
    });
  };

  return {
    instrumentHandler,
    captureError,
    traceMetaTags: () => {
      const data = Sentry.getTraceData();
      const trace = data["sentry-trace"];
      if (trace === undefined) return "";
      // The SDK percent-encodes baggage; escaped all the same, as anything written into HTML.
      const baggage = data.baggage === undefined
        ? ""
        : `<meta name="baggage" content="${escapeHtml(data.baggage)}">`;
      return `<meta name="sentry-trace" content="${escapeHtml(trace)}">${baggage}`;
    },
    flush: (timeoutMs) => {
      logSuppressed(true);
      return Sentry.flush(timeoutMs);
    },
  };
}

// What the event's `request` shows: method, URL without the query (tokens and personal data
// stay on the server, as in the request log), and only headers that carry no credentials.
function requestData(req: Request, url: string) {
  const headers: Record<string, string> = {};
  for (const name of ["host", "user-agent"]) {
    const value = req.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { method: req.method, url, headers };
}

// Without the query or a fragment, which only a hand-made request sends.
function withoutQuery(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}
