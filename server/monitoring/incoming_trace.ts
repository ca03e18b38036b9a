/** What the server continues of the trace a request arrives in: a client's "sampled" flag within
 * a budget, and the head's sampling context (`baggage`) only as large as Sentry itself sends it. */
import {
  baggageHeaderToDynamicSamplingContext,
  dynamicSamplingContextToSentryBaggageHeader,
  extractTraceparentData,
  MAX_BAGGAGE_STRING_LENGTH,
} from "@sentry/core";

/** The incoming trace to continue: a malformed header or all-zero ids (invalid in W3C Trace
 * Context) start a new one; a client's "sampled" flag and baggage (`sample_rand`) are kept only
 * while the budget has a token, else the server's rate decides; the baggage as boundedBaggage. */
export function incomingTrace(
  sentryTrace: string,
  baggage: string | null,
  takeToken: () => boolean,
): { sentryTrace: string; baggage: string | null } {
  const { traceId, parentSpanId, parentSampled } = extractTraceparentData(sentryTrace) ?? {};
  if (!traceId || /^0+$/.test(traceId) || /^0+$/.test(parentSpanId ?? "")) {
    return { sentryTrace: "", baggage: null };
  }
  if (parentSampled === false || takeToken()) {
    return { sentryTrace, baggage: boundedBaggage(baggage, traceId) };
  }
  return { sentryTrace: [traceId, parentSpanId].filter(Boolean).join("-"), baggage: null };
}

/** The longest value kept of each sampling context key: what Sentry's ingest (Relay) stores for
 * names and user ids, ids and numbers at their own size. The context is repeated in every
 * envelope of the trace, so a head's oversized value would cost that much again in each one. */
const DSC_MAX_CHARS = new Map([
  ["trace_id", 32],
  ["public_key", 32],
  ["replay_id", 32],
  ["org_id", 20],
  ["sample_rate", 32],
  ["sample_rand", 32],
  ["sampled", 5],
  ["release", 200],
  ["environment", 64],
  ["transaction", 200],
  ["user_id", 128],
]);

// Dropped over Sentry's own limit (8,192) or naming another trace; else only the known keys, cut.
function boundedBaggage(baggage: string | null, traceId: string): string | null {
  // No Sentry SDK sends more (MAX_BAGGAGE_STRING_LENGTH): a larger one is not a head's context.
  if (baggage === null || baggage.length > MAX_BAGGAGE_STRING_LENGTH) return null;
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(baggageHeaderToDynamicSamplingContext(baggage) ?? {})) {
    const max = DSC_MAX_CHARS.get(key);
    // Well-formed: a cut between a surrogate pair would make the SDK's encodeURIComponent throw.
    if (max !== undefined && value) kept[key] = value.slice(0, max).toWellFormed();
  }
  if (kept.trace_id !== undefined && kept.trace_id !== traceId) return null;
  return dynamicSamplingContextToSentryBaggageHeader(kept) ?? null;
}
