/**
 * The queue of envelopes in flight that the SDK's `createTransport` keeps (its `buffer`
 * argument), as a count. The SDK's own (`makePromiseBuffer`) holds each envelope's promise in
 * a Set from send to answer, and a long-lived Set that is added to and deleted from for every
 * envelope turns into old-generation garbage every few envelopes (pending_promises.ts explains
 * why). Everything else stays the SDK's: what it sends, its rate limits, its client reports.
 */
import { type PromiseBuffer, SENTRY_BUFFER_FULL_ERROR } from "@sentry/core";
import { PendingPromises } from "../pending_promises.ts";

/** The SDK's default: envelopes in flight at once before the next ones are dropped. */
export const SEND_BUFFER_LIMIT = 64;

/**
 * A buffer for `createTransport`, with the SDK's behaviour: at most `limit` envelopes in
 * flight, and the next one refused with the SDK's own "buffer full" reason (which its transport
 * counts as a `queue_overflow` loss); `drain(timeout)` resolves true once the envelopes in flight
 * when it was called are answered or failed, or false when the timeout (in milliseconds; none or
 * 0 for no limit) passes first, and clears its timer either way (the SDK's leaves its own
 * running).
 *
 * @example
 * createTransport(options, makeRequest, sendBuffer());
 */
export function sendBuffer<T>(limit = SEND_BUFFER_LIMIT): PromiseBuffer<T> {
  const inFlight = new PendingPromises();
  return {
    // The SDK (10.x) never reads this list; keeping it would bring the Set back.
    get $() {
      return [];
    },
    add(taskProducer) {
      if (inFlight.count >= limit) return Promise.reject(SENTRY_BUFFER_FULL_ERROR);
      const task = taskProducer();
      inFlight.track(task);
      return task;
    },
    drain(timeout) {
      return inFlight.settled(timeout ? timeout : undefined);
    },
  };
}
