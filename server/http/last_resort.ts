/**
 * The answer of last resort, for `Deno.serve`'s `onError`: whatever escapes the app's own
 * handler (a bug in the handler chain, a wrapper such as the dev server) is logged here, within
 * the failure log's limit (failure_log.ts), and answered with the generic 500 page instead of
 * Deno's bare one. Nothing of the error reaches the client, and it is not reported to Sentry: it
 * may be a client's doing.
 */
import type { Handler } from "./handler.ts";
import { internalError } from "./error_pages.ts";
import { defaultFailureLog } from "./failure_log.ts";

/**
 * Log `error` and return the generic 500 page.
 *
 * @example
 * Deno.serve({ onError: lastResortResponse }, handler);
 */
export function lastResortResponse(error: unknown): Response {
  defaultFailureLog().failed("request failed outside the app's handler:", error);
  return internalError();
}

/**
 * `handler`, answering with {@link lastResortResponse} when it throws or rejects. For
 * `deno serve`, whose default export has no `onError` (Deno 2.9.6 ignores one if given).
 */
export function withLastResort(handler: Handler): Handler {
  return (req, info) => {
    try {
      const res = handler(req, info);
      return res instanceof Promise ? res.catch(lastResortResponse) : res;
    } catch (error) {
      return lastResortResponse(error);
    }
  };
}
