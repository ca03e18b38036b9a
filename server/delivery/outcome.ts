/** What an ingest's answer to one send means, and the rate limits answers set, per DSN key: pure,
 * the time passed in. Header parsing is @sentry/core's, as the SDKs read it. */
import { envelopeItemTypeToDataCategory, type RateLimits, updateRateLimits } from "@sentry/core";

/** A send's result: the ingest's answer, or none at all (refused, reset, timed out). */
export type SendResult = { readonly status: number; readonly headers: Headers } | "no-answer";

/** Sent (2xx) is done; a 4xx or a redirect is final, never sent again; as Relay, no answer and
 * 502/503/504 are the ingest's trouble and retried. A 429 is final (its limit is remembered). */
export function verdict(result: SendResult): "done" | "final" | "retry" {
  if (result === "no-answer") return "retry";
  const { status } = result;
  if (status >= 200 && status < 300) return "done";
  return status === 502 || status === 503 || status === 504 ? "retry" : "final";
}

/** Sentry's data categories of an envelope's item types (event -> error, replay_recording ->
 * replay, ...), each once; unknown types are their own category, as Sentry's SDKs count them. */
export function categoriesOf(itemTypes: readonly string[]): string[] {
  // @sentry/core looks a type up with `in`: "constructor" would map to Object's function.
  const category = (type: string) => {
    const mapped: unknown = envelopeItemTypeToDataCategory(type as never);
    return typeof mapped === "string" ? mapped : type;
  };
  return [...new Set(itemTypes.map(category))];
}

/** Upstream rate limits per DSN key, as the ingest set them (X-Sentry-Rate-Limits, else a 429's
 * Retry-After for every category). */
export function createRateLimitMemory() {
  // Keys are configured DSNs' keys only (the tunnel checks the DSN first): a bounded table.
  const limits = new Map<string, RateLimits>();
  // A Map's lookup would do, but RateLimits is @sentry/core's plain object: never index it with a
  // client's category (`__proto__`) without hasOwn.
  const until = (known: RateLimits, category: string) =>
    Math.max(Object.hasOwn(known, category) ? known[category]! : 0, known.all ?? 0);
  return {
    /** Remember the limits an answer sets; true if it set any. */
    learn(key: string, result: SendResult, nowMs: number): boolean {
      if (result === "no-answer") return false;
      const { status, headers } = result;
      // An empty header is none: the SDK's parser would read it as a limit of 60 s on everything.
      const header = headers.get("x-sentry-rate-limits") || null;
      if (status !== 429 && header === null) return false;
      const limit = { "x-sentry-rate-limits": header, "retry-after": headers.get("retry-after") };
      const answer = { statusCode: status, headers: limit };
      limits.set(key, updateRateLimits(limits.get(key) ?? {}, answer, nowMs));
      return true;
    },
    /** Milliseconds until an envelope of these categories may go ([]: unknown, so only a limit on
     * every category holds it); 0 if it may go now. */
    blockedFor(key: string, categories: readonly string[], nowMs: number): number {
      const known = limits.get(key) ?? {};
      const free = Math.min(
        ...(categories.length ? categories : ["all"]).map((c) => until(known, c)),
      );
      return Math.max(0, free - nowMs);
    },
    /** The limits still running for `key`, as an X-Sentry-Rate-Limits value in seconds left. */
    header(key: string, nowMs: number): string {
      return Object.entries(limits.get(key) ?? {}).filter(([, end]) => end > nowMs)
        .map(([category, end]) =>
          `${Math.ceil((end - nowMs) / 1000)}:${category === "all" ? "" : category}:key`
        ).join(",");
    },
  };
}
