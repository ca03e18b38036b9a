/** Sentry for the server: each app request in its own isolation scope with its span active, so
 * app code's `setTag`, `setUser`, `startSpan` stay with it; a client's "sampled" has a budget. */
import * as Sentry from "@sentry/deno";
import type { BaseTransportOptions, Transport } from "@sentry/core";
import type { ContextHandler } from "../http/request_context.ts";
import type { Config } from "../lifecycle/config.ts";
import { ErrorLimit } from "../http/failure_log.ts";
import { escapeHtml } from "../http/html.ts";
import { reportable } from "./reportable.ts";
import { incomingTrace } from "./incoming_trace.ts";
import { fetchTracingIntegration } from "./fetch_tracing.ts";
import { createRateLimiter } from "../rate_limit.ts";
import type { Monitoring } from "./monitoring.ts";
import type { DeliveryQueue } from "../delivery/queue.ts";
import { itemTypes } from "../tunnel/envelope.ts";

/** What {@link startMonitoring} can be given besides the configuration; all optional. */
export interface MonitoringOptions {
  /** Where envelopes go instead of the DSN's ingest (the dev inbox). */
  readonly transport?: Sentry.DenoOptions["transport"];
  /** How many incoming "sampled" traces are honoured per window (also the burst), beyond the
   * server's rate; 10 a second by default. */
  readonly traceBudget?: { readonly limit: number; readonly windowMs: number };
  /** The process's delivery queue: the SDK's envelopes go through it (else the SDK's transport). */
  readonly delivery?: Pick<DeliveryQueue, "enqueue">;
  /** The app's own SDK options (server/sentry_options.ts), but DSN, release and sampling. */
  readonly sentryOptions?: Partial<Sentry.DenoOptions>;
}

/** Start `@sentry/deno` with the configuration's DSN and return the server's handle on it. */
export function startMonitoring(
  config: Config,
  release: string,
  options: MonitoringOptions = {},
): Monitoring {
  const budget = createRateLimiter(options.traceBudget ?? { limit: 10, windowMs: 1000 });
  const takeToken = () => budget.take("", performance.now()).allowed;
  const app = options.sentryOptions ?? {};
  const client = Sentry.init({
    ...app,
    dsn: config.sentryDsn,
    environment: config.sentryEnvironment,
    release,
    // No tracesSampler: a parent's decision keeps the head's rate; the budget acts on the header.
    tracesSampleRate: config.tracesSampleRate,
    transport: options.transport ?? (options.delivery && queuedTransport(options.delivery)),
    // No cookies, Authorization or client address unless the app opts in.
    sendDefaultPii: app.sendDefaultPii ?? false,
    // A message can quote a client's input whole (`new URL(input)` does).
    maxValueLength: MAX_VALUE_LENGTH,
    sendClientReports: app.sendClientReports ?? true,
    enableLogs: config.enableLogs,
    // Anchored: a target is a URL prefix, never a substring of a URL (fetch_tracing.ts).
    tracePropagationTargets: config.tracePropagationTargets.map((url) =>
      new RegExp(`^${RegExp.escape(url)}`)
    ),
    // The SDK's defaults, so an upgrade's new ones switch on, less those named in LEFT_OUT.
    defaultIntegrations: Sentry.getDefaultIntegrations({}).filter((i) => !LEFT_OUT.has(i.name)),
    integrations: [
      fetchTracingIntegration(),
      // Frames relative to the app's root, so an issue groups alike on every host.
      Sentry.rewriteFramesIntegration({ root: APP_ROOT, prefix: "app:///" }),
      ...(Array.isArray(app.integrations) ? app.integrations : []),
    ],
  });

  // @sentry/deno never calls `_flushOutcomes` (Node's does each minute): at flush and each minute.
  const outcomes = client as unknown as { _flushOutcomes?: () => void } | undefined;
  let reportedAt = performance.now();
  const report = () => (reportedAt = performance.now(), outcomes?._flushOutcomes?.());
  client?.on("flush", report);
  client?.on("beforeEnvelope", () => performance.now() - reportedAt >= 60_000 && report());

  const limit = new ErrorLimit(
    {},
    (total, named) =>
      console.warn(`monitoring: ${total} error events suppressed by the rate limit: ${named}`),
  );

  const instrumentHandler = (handler: ContextHandler): ContextHandler => (req, info, ctx) =>
    Sentry.withIsolationScope((scope) => {
      const request = requestData(req);
      scope.setSDKProcessingMetadata({ normalizedRequest: request });
      const span = () =>
        Sentry.startSpan({
          name: `${req.method} ${ctx.path}`,
          op: "http.server",
          attributes: {
            [Sentry.SEMANTIC_ATTRIBUTE_SENTRY_ORIGIN]: "auto.http.deno",
            // Only declared routes are wrapped, so the path is a route, never a client's string.
            [Sentry.SEMANTIC_ATTRIBUTE_SENTRY_SOURCE]: "route",
            "http.request.method": req.method,
            "url.full": request.url,
            "url.path": ctx.path,
            "server.address": new URL(request.url).hostname,
          },
        }, (span) => {
          const answered = (res: Response) => (Sentry.setHttpStatus(span, res.status), res);
          const res = handler(req, info, ctx);
          return res instanceof Promise ? res.then(answered) : answered(res);
        });
      const sentryTrace = req.headers.get("sentry-trace");
      if (sentryTrace === null) return span();
      const trace = incomingTrace(sentryTrace, req.headers.get("baggage"), takeToken);
      return Sentry.continueTrace(trace, span);
    });

  const captureError = (error: unknown, req?: Request) => {
    if (!limit.admit(error)) return;
    Sentry.withScope((scope) => {
      // Outside a wrapped handler (a static file, a 404 page) the request is named here.
      if (req !== undefined && Sentry.getActiveSpan() === undefined) {
        scope.setSDKProcessingMetadata({ normalizedRequest: requestData(req) });
      }
      // Unhandled: the app caught it only to answer with its 500 page.
      Sentry.captureException(reportable(error), {
        mechanism: { type: "auto.http.deno", handled: false },
      });
    });
  };

  return {
    instrumentHandler,
    captureError,
    traceMetaTags: () =>
      Object.entries(Sentry.getTraceData()).filter(([, value]) => value !== undefined)
        .map(([name, value]) => `<meta name="${name}" content="${escapeHtml(value)}">`).join(""),
    flush: (timeoutMs) => (limit.flush(), Sentry.flush(timeoutMs)),
  };
}

const APP_ROOT = new URL("../../", import.meta.url).pathname;
// The Deno.serve wrapper re-chunks every answer (the handler is wrapped by hand instead), context
// lines read sources production may not read, rewriteFrames does NormalizePaths' work. DenoHttp
// stays: it sets up the AsyncLocalStorage scopes that keep each request's scope its own.
const LEFT_OUT = new Set(["DenoServe", "ContextLines", "NormalizePaths"]);
const MAX_VALUE_LENGTH = 8 * 1024;

// An event's `request`: method, URL without its query (tokens stay here), credential-free headers
// cut as messages are (the SDK's maxValueLength leaves them whole).
function requestData(req: Request) {
  const headers: Record<string, string> = {};
  for (const name of ["host", "user-agent"]) {
    const value = req.headers.get(name);
    if (value !== null) headers[name] = value.slice(0, MAX_VALUE_LENGTH);
  }
  return { method: req.method, url: req.url.split(/[?#]/, 1)[0], headers };
}

/** The SDK's transport: each envelope handed to the delivery queue, which sends, retries and
 * answers as the ingest would (200 once queued, 429 with the limits, 503 when full). */
function queuedTransport(delivery: Pick<DeliveryQueue, "enqueue">) {
  return (options: BaseTransportOptions): Transport => {
    // The SDK's URL names the DSN's key, as rate limits and client reports are keyed.
    const key = new URL(options.url).searchParams.get("sentry_key") ?? "";
    const headers = { "content-type": "application/x-sentry-envelope", ...options.headers };
    return Sentry.createTransport(options, ({ body }) => {
      const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
      const envelope = { url: options.url, body: bytes, headers, key, itemTypes: itemTypes(bytes) };
      const { status, headers: answer } = delivery.enqueue(envelope);
      const none = { "x-sentry-rate-limits": null, "retry-after": null };
      return Promise.resolve({ statusCode: status, headers: { ...none, ...answer } });
    });
  };
}
