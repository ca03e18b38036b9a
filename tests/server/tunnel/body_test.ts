import assert from "node:assert/strict";
import { createStreamSlots } from "../../../server/tunnel/body.ts";

/** Whether `promise` has settled by the time queued reactions have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true);
  await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
}

Deno.test("slots: takers past the limit wait, in order, and get a slot as one is released", async () => {
  const take = createStreamSlots(2);
  const [a, b, c, d] = [take(), take(), take(), take()];
  assert.ok(await settled(a.ready) && await settled(b.ready));
  assert.ok(!await settled(c.ready) && !await settled(d.ready));
  a.release();
  assert.ok(await settled(c.ready));
  assert.ok(!await settled(d.ready));
  b.release();
  assert.ok(await settled(d.ready));
});

Deno.test("slots: a taker that leaves the line takes no slot; a second release does nothing", async () => {
  const take = createStreamSlots(1);
  const holder = take();
  const gone = take();
  const next = take();
  gone.release(); // stopped waiting (its deadline)
  holder.release();
  holder.release();
  assert.ok(await settled(next.ready));
  assert.ok(!await settled(gone.ready));
  // One slot in all: with `next` holding it, a newcomer waits.
  const late = take();
  assert.ok(!await settled(late.ready));
  next.release();
  assert.ok(await settled(late.ready));
});
