/** What "in order" means for the delivery queue (server/delivery/queue.ts) when it sends several at
 * once: live, while shutting down, or with a backlog past half its bounds. */
import assert from "node:assert/strict";
import { MAX_IN_FLIGHT } from "../../server/delivery/queue.ts";

/** `arrived` holds each of `expected` once, sent in order: up to {@link MAX_IN_FLIGHT} at once, so
 * none arrives {@link MAX_IN_FLIGHT} or more places ahead of its turn. */
export function assertSentInOrder(arrived: readonly number[], expected: readonly number[]) {
  assert.deepEqual(arrived.toSorted((a, b) => a - b), expected);
  const early = arrived.filter((n, place) => expected.indexOf(n) >= place + MAX_IN_FLIGHT);
  assert.deepEqual(early, [], `arrived ${arrived}`);
}
