import assert from "node:assert/strict";
import fc from "fast-check";
import { clientShare, createBodySlots } from "../../../server/http/body_slots.ts";

/** Whether `promise` has settled by the time queued reactions have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(() => done = true);
  await new Promise((resolve) => setTimeout(resolve, 0));
  return done;
}

Deno.test("slots: one client's share is half while per-client limits are on, never 0", () => {
  assert.deepEqual([8, 16, 3, 1].map((n) => clientShare(n, true)), [4, 8, 1, 1]);
  assert.deepEqual([8, 1].map((n) => clientShare(n, false)), [8, 1]);
});

Deno.test("slots: takers past the limit wait, in order, and get a slot as one is released", async () => {
  const take = createBodySlots(2);
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
  const take = createBodySlots(1);
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
  const take = createBodySlots(3, 1);
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

Deno.test("slots: clients that always keep an upload waiting cannot starve a third", async () => {
  const take = createBodySlots(2, 1);
  // a and b hold a slot each with two more waiting; c comes last.
  const lines = { a: [take("a"), take("a"), take("a")], b: [take("b"), take("b"), take("b")] };
  const c = take("c");
  for (let round = 0; round < 4 && !await settled(c.ready); round++) {
    // The holder of a or b ends, and that client sends another, after c's.
    const client = round % 2 === 0 ? lines.a : lines.b;
    client.shift()!.release();
    client.push(take(round % 2 === 0 ? "a" : "b"));
  }
  assert.ok(await settled(c.ready), "c waits behind uploads that came after it");
});

Deno.test("slots: property: within the limit and each share, no slot idle while a client may take it, none lost", async () => {
  type Taker = {
    key: string;
    slot: ReturnType<ReturnType<typeof createBodySlots>>;
    granted: boolean;
    done: boolean;
  };
  const step = fc.oneof(
    fc.record({ take: fc.constantFrom("a", "b", "c", "d") }),
    // An end (a holder's release, a waiter leaving its line); ended again: a second release.
    fc.record({ end: fc.nat() }),
  );
  const flush = async () => {
    for (let i = 0; i < 4; i++) await null;
  };
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 1, max: 6 }),
      fc.integer({ min: 1, max: 6 }),
      fc.array(step, { maxLength: 60 }),
      async (limit, share, steps) => {
        const perClient = Math.min(share, limit);
        const take = createBodySlots(limit, perClient);
        const takers: Taker[] = [];
        const check = () => {
          const held = new Map<string, number>();
          for (const t of takers) {
            if (t.granted && !t.done) {
              held.set(t.key, (held.get(t.key) ?? 0) + 1);
            }
          }
          const total = [...held.values()].reduce((sum, n) => sum + n, 0);
          assert.ok(total <= limit && [...held.values()].every((n) => n <= perClient));
          const eligible = takers.some((t) =>
            !t.granted && !t.done && (held.get(t.key) ?? 0) < perClient
          );
          assert.ok(total === limit || !eligible, "a slot idle while a client may take it");
        };
        for (const s of steps) {
          if ("take" in s) {
            const taker: Taker = { key: s.take, slot: take(s.take), granted: false, done: false };
            taker.slot.ready.then(() => taker.granted = true);
            takers.push(taker);
          } else if (takers.length > 0) {
            const taker = takers[s.end % takers.length];
            taker.done = true;
            taker.slot.release();
          }
          await flush();
          check();
        }
        // Every waiter is served once the holders end, and then every slot is free again.
        for (let holder; (holder = takers.find((t) => t.granted && !t.done));) {
          holder.done = true;
          holder.slot.release();
          await flush();
          check();
        }
        assert.ok(takers.every((t) => t.granted || t.done), "a waiter never served");
        let granted = 0;
        for (let i = 0; i < limit; i++) take(`fresh${i}`).ready.then(() => granted++);
        await flush();
        assert.equal(granted, limit, "a slot lost");
      },
    ),
    { numRuns: 1000 },
  );
});
