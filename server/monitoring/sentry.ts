/**
 * Server-side monitoring with Sentry (a client on `@sentry/core`, sentry_client.ts): started
 * once when `SENTRY_DSN` is set.
 *
 * The request path uses none of Sentry's scopes or spans: {@link instrumentHandler} decides
 * sampling, makes up the ids the browser needs to continue the trace, and for a sampled
 * request records its start, end and status (request_recorder.ts), then hands one finished
 * transaction envelope to the SDK's client, which owns transport, rate limits and flush.
 * Errors still go through the SDK, with the request's trace set on their scope.
 *
 * Clients are not trusted with its cost: an incoming "sampled" trace is honoured only within a
 * small budget (trace_budget.ts), and error events are limited per distinct error
 * (error_throttle.ts), so neither a header nor an error storm multiplies what is sent.
 */
import { captureException, flush, withScope } from "@sentry/core";
import type { ContextHandler } from "../http/handler.ts";
import type { RequestContext } from "../http/request_context.ts";
import { requestHeader } from "../http/request_headers.ts";
import { appFramesIntegration } from "./app_frames.ts";
import { envelopeTransport } from "./envelope_transport.ts";
import { type SentryClientOptions, startSentryClient } from "./sentry_client.ts";
import { createIngestClient } from "../tunnel/ingest_client.ts";
import type { Config } from "../lifecycle/config.ts";
import {
  errorKey,
  ErrorThrottle,
  type ErrorThrottleOptions,
  formatSuppressed,
} from "../error_throttle.ts";
import {
  type FinishedRequest,
  newSpanId,
  newTraceId,
  type RequestTrace,
  samplingContext,
  type TransactionDefaults,
  transactionEnvelope,
  transactionEvent,
} from "./request_recorder.ts";
import { parseSentryTrace } from "./sentry_trace.ts";
import { reportable } from "./reportable.ts";
import { decideSampling, DEFAULT_TRACE_BUDGET, TokenBucket } from "./trace_budget.ts";
import { traceMetaTagWriter } from "./trace_meta.ts";
import { type Monitoring, MONITORING_OFF } from "./monitoring.ts";
import { BatchQueue } from "../batch_queue.ts";
import { PendingPromises } from "../pending_promises.ts";

// How long a finished traced request waits for others before the batch becomes transactions.
// Building and sending one transaction runs a long stretch of code (the event, the SDK's envelope
// serialization and transport, the pipeline). At the default sample rate a traced request comes
// every ten or so, and that code ran cold each time: sampled CPU profiles of the server under
// load put it at about 130 µs per traced request, against 46 µs when every request was traced
// and it stayed hot. Batched, `GET /` at the default rate went from 108 to 101 µs of CPU per
// request (interleaved runs, 12 rounds) with a 5 ms wait, and about 3 µs less again with 20 ms.
const TRANSACTION_WAIT_MS = 20;

export type { Monitoring };

/** What {@link startMonitoring} can be given besides the configuration; all optional. */
export interface MonitoringOptions {
  /** Where envelopes go instead of the DSN's ingest (the dev inbox). */
  readonly transport?: SentryClientOptions["transport"];
  /** How many incoming "sampled" traces are honoured beyond the server's own sample rate. */
  readonly traceBudget?: { readonly perSecond: number; readonly burst: number };
  /** How many error events each distinct error may send. */
  readonly errorLimit?: ErrorThrottleOptions;
  /** Milliseconds on a monotonic clock, for the budget and the error limit. */
  readonly now?: () => number;
  /** Where the line about suppressed error events goes; `console.warn` by default. */
  readonly log?: (line: string) => void;
  /**
   * The app's root folder (a file URL ending in `/`), which stack frames are made relative to;
   * by default the folder above server/, which is right only for this module's source.
   */
  readonly appRoot?: string;
}

/**
 * Start the Sentry client (sentry_client.ts) if the configuration has a DSN; otherwise return
 * a no-op.
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
  if (config.sentryDsn === undefined) return MONITORING_OFF;
  const client = startSentryClient({
    dsn: config.sentryDsn,
    // Pipelined keep-alive connections to the ingest.
    transport: options.transport ?? envelopeTransport(createIngestClient()),
    environment: config.sentryEnvironment,
    release,
    tracesSampleRate: config.tracesSampleRate,
    integrations: [
      appFramesIntegration(options.appRoot ?? new URL("../../", import.meta.url).href),
    ],
  });
  const rate = config.tracesSampleRate;
  const defaults: TransactionDefaults = {
    environment: config.sentryEnvironment,
    release,
    sampleRate: rate,
    publicKey: config.tunnelAllowedDsns[0]?.publicKey ?? "",
    sdk: client.getSdkMetadata()?.sdk ?? { name: "sentry.javascript.deno", version: "" },
    contexts: { runtime: { name: "deno", version: Deno.version.deno } },
  };
  const metaTags = traceMetaTagWriter(samplingContext(
    { traceId: "", spanId: "", sampled: false, sampleRand: 0 },
    defaults,
  ));
  const now = options.now ?? (() => performance.now());
  const budget = new TokenBucket(options.traceBudget ?? DEFAULT_TRACE_BUDGET, now());
  const takeToken = () => budget.take(now());
  const throttle = new ErrorThrottle(options.errorLimit, now());
  const log = options.log ?? ((line: string) => console.warn(line));
  const suppressedLead = (n: number) =>
    `monitoring: ${n} error events suppressed by the rate limit`;
  const logSuppressed = (force: boolean) => {
    const suppressed = throttle.report(now(), force);
    const line = suppressed && formatSuppressed(suppressed, suppressedLead);
    if (line) log(line);
  };

  // Transactions handed to the SDK and not answered yet: flush waits for them itself. Counted,
  // not kept in a Set (pending_promises.ts).
  const sending = new PendingPromises();
  const finished = new BatchQueue<{ trace: RequestTrace; request: FinishedRequest }>(
    (items) => {
      for (const { trace, request } of items) {
        // One transaction that cannot be built is lost alone: this runs from a timer, where a
        // throw would end the process as a fatal error.
        try {
          const event = transactionEvent(trace, request, defaults);
          // Errors are the transport's to count and log (a dropped envelope, a full queue).
          const sent = client.sendEnvelope(
            transactionEnvelope(event, samplingContext(trace, defaults), defaults.sdk),
          );
          sending.track(sent);
        } catch (error) {
          console.error("monitoring: a transaction was dropped:", error);
        }
      }
    },
    // The transport holds at most 64 envelopes until the ingest answers them, errors included:
    // a batch takes at most a quarter of that.
    { waitMs: TRANSACTION_WAIT_MS, maxBatch: 16 },
  );
  // Every flush of the client sends what is queued first: this module's flush, and the one the
  // global handlers make before a fatal error ends the process.
  client.on("flush", () => finished.drain());

  // Synchronous when the handler is (the pages are): Deno.serve then sends the answer as it is,
  // with no promise in between.
  const record = (
    trace: RequestTrace,
    req: Request,
    pathname: string,
    run: () => ReturnType<ContextHandler>,
  ): ReturnType<ContextHandler> => {
    const startMs = performance.timeOrigin + performance.now();
    const finish = (status: number) => {
      finished.push({
        trace,
        request: {
          method: req.method,
          // Without the query: it can carry tokens and personal data, kept out of the log too.
          url: withoutQuery(req.url),
          pathname,
          status,
          startMs,
          endMs: performance.timeOrigin + performance.now(),
        },
      });
    };
    let res: ReturnType<ContextHandler>;
    try {
      res = run();
    } catch (error) {
      finish(500);
      throw error;
    }
    if (!(res instanceof Promise)) {
      finish(res.status);
      return res;
    }
    return res.then((answer) => {
      finish(answer.status);
      return answer;
    }, (error) => {
      finish(500);
      throw error;
    });
  };

  const instrumentHandler = (handler: ContextHandler): ContextHandler => (req, info, ctx) => {
    const header = requestHeader(req, "sentry-trace");
    // Malformed headers count as absent: a client's typo never fails the request.
    const parent = header === null ? undefined : parseSentryTrace(header);
    const sampleRand = Math.random();
    const decision = decideSampling(parent?.sampled, sampleRand < rate, takeToken);
    const trace: RequestTrace = {
      traceId: parent?.traceId ?? newTraceId(),
      spanId: newSpanId(),
      parentSpanId: parent?.parentSpanId,
      // Head-based sampling: the browser's page load follows this decision.
      sampled: decision !== "none",
      sampleRand,
    };
    // The request's context carries its trace to errors and to the page's meta tags: an
    // AsyncLocalStorage context would cost about 0.3 µs per request plus one per promise.
    ctx.trace = trace;
    // Unsampled requests (most) pay for nothing more: no promise, no timing, no envelope.
    return trace.sampled
      ? record(trace, req, ctx.path, () => handler(req, info, ctx))
      : handler(req, info, ctx);
  };

  const captureError = (error: unknown, ctx?: RequestContext, req?: Request) => {
    logSuppressed(false);
    if (!throttle.admit(errorKey(error), now())) return;
    const trace = ctx?.trace;
    withScope((scope) => {
      if (req !== undefined) {
        // The event names the request it happened in, as the transaction does: method and URL,
        // without the query (requestDataIntegration writes it into the event).
        scope.setSDKProcessingMetadata({
          normalizedRequest: { method: req.method, url: withoutQuery(req.url) },
        });
      }
      if (trace !== undefined) {
        // The error belongs to the request's span, as it would under an active Sentry span.
        scope.setPropagationContext({
          traceId: trace.traceId,
          propagationSpanId: trace.spanId,
          parentSpanId: trace.parentSpanId,
          sampled: trace.sampled,
          sampleRand: trace.sampleRand,
        });
      }
      // Unhandled: the app only catches it to answer with a generic 500 page.
      // The SDK gets a value it can read whole (reportable.ts): a Symbol, a getter that throws
      // or an AggregateError of thousands must not stall it or the server.
      captureException(reportable(error), {
        mechanism: { type: "auto.http.deno", handled: false },
      });
    });
  };

  return {
    instrumentHandler,
    captureError,
    traceMetaTags: (ctx) => ctx.trace === undefined ? "" : metaTags(ctx.trace),
    flush: async (timeoutMs) => {
      logSuppressed(true);
      // Sent now rather than by the client's flush hook, and waited for here with a timer that
      // is cleared, whatever the transport: the SDK's own buffer (the dev inbox's transport has
      // it) waits with one it leaves running (unref'd) for the whole timeout.
      const started = performance.now();
      finished.drain();
      const sent = await sending.settled(timeoutMs);
      const left = Math.max(1, timeoutMs - (performance.now() - started));
      return (await flush(left)) && sent;
    },
  };
}

// Without the query (tokens, personal data) or a fragment, which only a hand-made request sends.
function withoutQuery(url: string): string {
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}
