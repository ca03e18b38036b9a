/**
 * The `<meta>` tags that hand the server's trace to the browser: `sentry-trace` (ids and the
 * sampling decision) and `baggage` (the dynamic sampling context), which the browser SDK reads
 * to continue the trace in its page load.
 */
import type { DynamicSamplingContext } from "@sentry/core";
import { escapeHtml } from "../page/html.ts";
import { type RequestTrace, sampleRandText } from "./request_recorder.ts";

/**
 * Build a function that writes a request's meta tags. The parts of the baggage that never
 * change (environment, release, public key, rate) are encoded once, here.
 *
 * @example
 * const metaTags = traceMetaTagWriter({ environment: "production", release: "r1", ... });
 * metaTags(trace); // '<meta name="sentry-trace" content="...-1"><meta name="baggage" ...>'
 */
export function traceMetaTagWriter(
  fixed: Pick<DynamicSamplingContext, "environment" | "release" | "public_key" | "sample_rate">,
): (trace: RequestTrace) => string {
  const prefix = [
    `sentry-environment=${encodeURIComponent(fixed.environment ?? "")}`,
    `sentry-release=${encodeURIComponent(fixed.release ?? "")}`,
    `sentry-public_key=${encodeURIComponent(fixed.public_key ?? "")}`,
  ].join(",");
  const rate = `sentry-sample_rate=${encodeURIComponent(fixed.sample_rate ?? "")}`;
  // Ids are hex digits, the flag and the draw are plain, and the rest is percent-encoded, which
  // leaves `'` as it is: only the fixed parts can need escaping, so they are escaped once, here.
  const baggageStart = `"><meta name="baggage" content="${escapeHtml(prefix)},sentry-trace_id=`;
  const baggageEnd = `,${escapeHtml(rate)}">`;
  return (trace) =>
    `<meta name="sentry-trace" content="${trace.traceId}-${trace.spanId}-${
      trace.sampled ? 1 : 0
    }${baggageStart}${trace.traceId},sentry-sampled=${trace.sampled},sentry-sample_rand=${
      sampleRandText(trace.sampleRand)
    }${baggageEnd}`;
}
