/**
 * The incoming `sentry-trace` header, read strictly: it comes from the client, so anything
 * that is not exactly `<32 hex>-<16 hex>[-0|-1]` is treated as if it were absent.
 */

/** A parent trace a request says it belongs to. */
export interface IncomingTrace {
  readonly traceId: string;
  readonly parentSpanId: string;
  /** The parent's sampling decision; undefined when the header defers it. */
  readonly sampled?: boolean;
}

// The longest valid value is 51 characters; a little room for surrounding blanks, and no
// regular expression ever runs over a long hostile value.
const MAX_LENGTH = 64;
const SENTRY_TRACE = /^[ \t]*([0-9a-f]{32})-([0-9a-f]{16})(?:-([01]))?[ \t]*$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_SPAN_ID = "0".repeat(16);

/**
 * Parse a `sentry-trace` header value; undefined for anything malformed. Never throws.
 *
 * @example
 * parseSentryTrace("0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-1")?.sampled; // true
 */
export function parseSentryTrace(value: string): IncomingTrace | undefined {
  if (value.length > MAX_LENGTH) return undefined;
  const match = SENTRY_TRACE.exec(value);
  // All-zero ids are invalid in W3C trace context, and Sentry would drop such a trace.
  if (match === null || match[1] === ZERO_TRACE_ID || match[2] === ZERO_SPAN_ID) return undefined;
  const flag = match[3];
  return {
    traceId: match[1],
    parentSpanId: match[2],
    sampled: flag === undefined ? undefined : flag === "1",
  };
}
