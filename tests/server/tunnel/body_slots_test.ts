import assert from "node:assert/strict";
import { BodySlots } from "../../../server/tunnel/body_slots.ts";
import { type Transfer, TransferStopped } from "../../../server/tunnel/body.ts";

// Only the fields BodySlots touches.
function transfer(): Transfer {
  return { cause: undefined, wake: undefined } as unknown as Transfer;
}

Deno.test("slots: takers past the limit wait, in order, and get a slot as one is released", async () => {
  const slots = new BodySlots(2);
  const order: number[] = [];
  await slots.take(transfer());
  await slots.take(transfer());
  const waiting = [3, 4].map((n) => slots.take(transfer()).then(() => order.push(n)));
  await Promise.resolve();
  assert.equal(slots.inUse, 2);
  assert.deepEqual(order, []);
  slots.release();
  await waiting[0];
  assert.deepEqual(order, [3]);
  slots.release();
  await waiting[1];
  assert.deepEqual(order, [3, 4]);
  assert.equal(slots.inUse, 2);
});

Deno.test("slots: a waiter stopped by its deadline leaves the queue and takes no slot", async () => {
  const slots = new BodySlots(1);
  await slots.take(transfer());
  const stopped = transfer();
  const gone = slots.take(stopped);
  stopped.wake!(new TransferStopped());
  await assert.rejects(gone, TransferStopped);
  assert.equal(stopped.wake, undefined);
  slots.release();
  assert.equal(slots.inUse, 0);
  // The slot went back to the pool, not to the waiter that left: the next take is immediate.
  const next = transfer();
  await slots.take(next);
  assert.equal(next.wake, undefined);
  assert.equal(slots.inUse, 1);
});

Deno.test("slots: a transfer already stopped never takes one", async () => {
  const slots = new BodySlots(1);
  const t = transfer();
  t.cause = "timeout";
  await assert.rejects(slots.take(t), TransferStopped);
  assert.equal(slots.inUse, 0);
});
