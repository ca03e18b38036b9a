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
 * Who decides that a request is traced: `"own"` (the server's sample rate drew it),
 * `"inherited"` (the incoming trace was sampled and the budget had room), or nobody (`"none"`).
 */
export type SamplingDecision = "own" | "inherited" | "none";

/**
 * Decide whether to trace a request. An incoming "not sampled" is honoured (it costs
 * nothing); an incoming "sampled" only spends the budget when the server's own draw said no.
 *
 * @example
 * decideSampling(true, false, () => bucket.take(now)); // "inherited" while the bucket lasts
 */
export function decideSampling(
  parentSampled: boolean | undefined,
  ownDraw: boolean,
  takeToken: () => boolean,
): SamplingDecision {
  if (parentSampled === false) return "none";
  if (ownDraw) return "own";
  return parentSampled === true && takeToken() ? "inherited" : "none";
}
