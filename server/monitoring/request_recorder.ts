/**
 * A small recorder for the server's sampled requests: ids, start and end, status and a few
 * attributes, turned into one Sentry transaction envelope when the request ends. It replaces
 * Sentry's scope and span machinery on the request path, which cost about 300 µs of CPU per
 * traced request; the SDK's client still sends the envelope (transport, rate limits, flush).
 */
import type { DynamicSamplingContext, Envelope, Event, SdkInfo } from "@sentry/core";
import { randomHex } from "../random_bytes.ts";

/** The trace a request belongs to, as the server decided it. */
export interface RequestTrace {
  readonly traceId: string;
  /** The server's own span for this request; the browser's page load is its child. */
  readonly spanId: string;
  /** The span the client said it came from, when it continued a trace. */
  readonly parentSpanId?: string;
  readonly sampled: boolean;
  /** The random draw in [0, 1) compared with the sample rate. */
  readonly sampleRand: number;
}

/** What is known about a finished request, besides its trace. */
export interface FinishedRequest {
  readonly method: string;
  /** The full request URL, as Sentry's request data shows it. */
  readonly url: string;
  readonly pathname: string;
  readonly status: number;
  /** Start and end, in milliseconds since the Unix epoch. */
  readonly startMs: number;
  readonly endMs: number;
}

/** What every transaction of this process shares: set once at start-up. */
export interface TransactionDefaults {
  readonly environment: string;
  readonly release: string;
  readonly sampleRate: number;
  readonly publicKey: string;
  readonly sdk: SdkInfo;
  /** Contexts such as the runtime, the same for every event. */
  readonly contexts?: Event["contexts"];
}

/** A new random trace id: 32 lowercase hex digits. */
export function newTraceId(): string {
  return randomHex(16);
}

/** A new random span id: 16 lowercase hex digits. */
export function newSpanId(): string {
  return randomHex(8);
}

/**
 * Sentry's span status for an HTTP status, as its own `setHttpStatus` would set it.
 *
 * @example
 * spanStatus(404); // "not_found"
 */
export function spanStatus(httpStatus: number): string {
  if (httpStatus >= 100 && httpStatus < 400) return "ok";
  return STATUS.get(httpStatus) ??
    (httpStatus >= 400 && httpStatus < 500
      ? "invalid_argument"
      : httpStatus >= 500 && httpStatus < 600
      ? "internal_error"
      : "unknown_error");
}

const STATUS = new Map([
  [401, "unauthenticated"],
  [403, "permission_denied"],
  [404, "not_found"],
  [409, "already_exists"],
  [413, "failed_precondition"],
  [429, "resource_exhausted"],
  [499, "cancelled"],
  [501, "unimplemented"],
  [503, "unavailable"],
  [504, "deadline_exceeded"],
]);

/**
 * The dynamic sampling context of a trace the server heads: what the envelope header and the
 * page's baggage carry. Values the client sent are never used.
 */
export function samplingContext(
  trace: RequestTrace,
  defaults: TransactionDefaults,
): DynamicSamplingContext {
  return {
    trace_id: trace.traceId,
    environment: defaults.environment,
    release: defaults.release,
    public_key: defaults.publicKey,
    sample_rate: String(defaults.sampleRate),
    sampled: String(trace.sampled),
    sample_rand: sampleRandText(trace.sampleRand),
  };
}

/**
 * The transaction event for one finished request: a root `http.server` span, no children.
 *
 * @example
 * const event = transactionEvent(trace, finished, defaults);
 * client.sendEnvelope(transactionEnvelope(event, samplingContext(trace, defaults), sdk));
 */
export function transactionEvent(
  trace: RequestTrace,
  request: FinishedRequest,
  defaults: TransactionDefaults,
): Event {
  const name = `${request.method} ${request.pathname}`;
  return {
    type: "transaction",
    event_id: newTraceId(),
    platform: "javascript",
    transaction: name,
    transaction_info: { source: "url" },
    start_timestamp: request.startMs / 1000,
    timestamp: request.endMs / 1000,
    environment: defaults.environment,
    release: defaults.release,
    sdk: defaults.sdk,
    request: { method: request.method, url: request.url },
    contexts: {
      ...defaults.contexts,
      trace: {
        trace_id: trace.traceId,
        span_id: trace.spanId,
        ...(trace.parentSpanId === undefined ? {} : { parent_span_id: trace.parentSpanId }),
        op: "http.server",
        origin: "auto.http.app",
        status: spanStatus(request.status),
        data: {
          "sentry.op": "http.server",
          "sentry.origin": "auto.http.app",
          "sentry.source": "url",
          "sentry.sample_rate": defaults.sampleRate,
          "http.request.method": request.method,
          "http.response.status_code": request.status,
        },
      },
    },
    spans: [],
  };
}

/** The envelope that carries one transaction, as the SDK's own client would build it. */
export function transactionEnvelope(
  event: Event,
  dsc: DynamicSamplingContext,
  sdk: SdkInfo,
): Envelope {
  return [
    {
      event_id: event.event_id,
      sent_at: new Date().toISOString(),
      sdk: { name: sdk.name, version: sdk.version },
      trace: dsc,
    },
    [[{ type: "transaction" }, event]],
  ] as Envelope;
}

/**
 * A trace's random draw as the DSC carries it: six decimals, and always below 1 as the draw is
 * (`toFixed` rounds 0.9999996 up to "1.000000", which no sample rate below 1 can admit).
 *
 * @example
 * sampleRandText(0.05); // "0.050000"
 */
export function sampleRandText(sampleRand: number): string {
  const text = sampleRand.toFixed(6);
  return text === "1.000000" ? "0.999999" : text;
}
