import assert from "node:assert/strict";
import { PendingPromises } from "../../server/pending_promises.ts";

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

Deno.test("PendingPromises counts promises until they fulfil or reject", async () => {
  const pending = new PendingPromises();
  assert.equal(pending.count, 0);
  assert.equal(await pending.settled(), true, "nothing pending: at once");
  const fulfil = Promise.withResolvers<number>();
  const reject = Promise.withResolvers<number>();
  pending.track(fulfil.promise);
  pending.track(reject.promise);
  assert.equal(pending.count, 2);
  fulfil.resolve(1);
  await tick();
  assert.equal(pending.count, 1);
  // Counting adds a handler, yet the rejection still reaches whoever awaits the promise.
  reject.reject(new Error("refused"));
  await assert.rejects(reject.promise, /refused/);
  await tick();
  assert.equal(pending.count, 0);
});

Deno.test("PendingPromises.settled waits for what was pending at the call, not what came later", async () => {
  const pending = new PendingPromises();
  const [a, b, c] = [1, 2, 3].map(() => Promise.withResolvers<void>());
  pending.track(a.promise);
  let first: boolean | undefined;
  const waitA = pending.settled(5_000).then((value) => first = value);
  pending.track(b.promise);
  let second: boolean | undefined;
  const waitAB = pending.settled(5_000).then((value) => second = value);
  pending.track(c.promise);
  b.resolve();
  await tick();
  assert.equal(first, undefined, "a is still pending");
  assert.equal(second, undefined, "a is still pending");
  a.resolve();
  assert.equal(await waitA, true);
  assert.equal(await waitAB, true, "woken though c, tracked after it, is still pending");
  assert.equal(pending.count, 1);
  c.resolve();
  await tick();
  assert.equal(pending.count, 0);
});

Deno.test("PendingPromises: busy again after a quiet spell, a new wait waits again", async () => {
  const pending = new PendingPromises();
  const a = Promise.withResolvers<void>();
  pending.track(a.promise);
  const waitA = pending.settled(5_000);
  a.resolve();
  assert.equal(await waitA, true);
  const b = Promise.withResolvers<void>();
  pending.track(b.promise);
  let done: boolean | undefined;
  const waitB = pending.settled(5_000).then((value) => done = value);
  await tick();
  assert.equal(done, undefined, "b is pending");
  b.resolve();
  assert.equal(await waitB, true);
});

// The test sanitizer fails the test if a 5 s timer were left running.
Deno.test("PendingPromises.settled gives up after its timeout and leaves no timer", async () => {
  const pending = new PendingPromises();
  pending.track(new Promise(() => {}));
  assert.equal(await pending.settled(5), false);
  assert.equal(pending.count, 1);
  const other = new PendingPromises();
  const gate = Promise.withResolvers<void>();
  other.track(gate.promise);
  const waiting = other.settled(5_000);
  setTimeout(gate.resolve, 10);
  assert.equal(await waiting, true);
});
