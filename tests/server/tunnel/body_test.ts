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

Deno.test("slots: a client past its share waits in its own line; others still get free slots", async () => {
  const take = createStreamSlots(3, 1);
  const [a1, a2, a3] = [take("a"), take("a"), take("a")];
  const b = take("b");
  assert.ok(await settled(a1.ready) && await settled(b.ready));
  assert.ok(
    !await settled(a2.ready) && !await settled(a3.ready),
    "one slot for a, though 1 is free",
  );
  const c = take("c");
  assert.ok(await settled(c.ready), "the free slot went to c");
  // a is at its share while a1 streams, so b's slot passes over a's line to d, who came later.
  const d = take("d");
  b.release();
  assert.ok(await settled(d.ready) && !await settled(a2.ready));
  a1.release(); // a's own slot passes to a's next upload
  assert.ok(await settled(a2.ready) && !await settled(a3.ready));
  a3.release(); // left a's line (its deadline)
  a2.release();
  c.release();
  d.release();
  // Every slot free again: three takers of three clients get one each at once.
  const again = [take("x"), take("y"), take("z")];
  for (const slot of again) assert.ok(await settled(slot.ready));
});
