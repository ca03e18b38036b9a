import { extractTraceparentData } from "@sentry/core";

/**
 * How many incoming "sampled" decisions the server honours: a token bucket, so a client
 * that marks every request as sampled cannot make the server trace (and send) them all.
 */

/** A token bucket over an injected clock (milliseconds); pure apart from its own state. */
export class TokenBucket {
  readonly #perMs: number;
  readonly #burst: number;
  #tokens: number;
  #updatedAt: number;

  /** Starts full: `burst` tokens, refilled at `perSecond`. */
  constructor(options: { perSecond: number; burst: number }, nowMs: number) {
    this.#perMs = Math.max(0, options.perSecond) / 1000;
    this.#burst = Math.max(0, options.burst);
    this.#tokens = this.#burst;
    this.#updatedAt = nowMs;
  }

  /** Take one token if there is one. */
  take(nowMs: number): boolean {
    // A clock that steps back (an injected one, or a wall clock) must not mint tokens.
    const elapsed = Math.max(0, nowMs - this.#updatedAt);
    this.#updatedAt = Math.max(this.#updatedAt, nowMs);
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsed * this.#perMs);
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}

/** The default budget: incoming "sampled" flags honoured per second, and the burst allowed. */
export const DEFAULT_TRACE_BUDGET = { perSecond: 10, burst: 10 } as const;

/**
 * The incoming `sentry-trace` header as the SDK is to see it. A "sampled" flag is the parent's
 * decision, which the SDK follows (keeping the head's sampling context as it is); it is kept
 * only while the budget has a token. Past it the flag is dropped and the server's own rate
 * decides, against the trace's own `sample_rand`. Anything else is passed on unchanged: the SDK
 * treats a malformed header as absent.
 *
 * @example
 * withinBudget("4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", () => false);
 * // "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"
 */
export function withinBudget(
  sentryTrace: string | undefined,
  takeToken: () => boolean,
): string | undefined {
  const parent = extractTraceparentData(sentryTrace);
  if (parent?.parentSampled !== true || parent.traceId === undefined || takeToken()) {
    return sentryTrace;
  }
  return parent.parentSpanId === undefined
    ? parent.traceId
    : `${parent.traceId}-${parent.parentSpanId}`;
}
