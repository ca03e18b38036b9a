import assert from "node:assert/strict";
import { PendingCount } from "../../server/pending_count.ts";

Deno.test("PendingCount counts work from add to done, and idle waits for the last", async () => {
  const pending = new PendingCount();
  assert.equal(pending.count, 0);
  assert.equal(await pending.idle(), true, "idle at once with nothing pending");
  pending.add();
  pending.add();
  assert.equal(pending.count, 2);
  let idle: boolean | undefined;
  const first = pending.idle().then((value) => idle = value);
  const second = pending.idle(60_000);
  pending.done();
  await Promise.resolve();
  assert.equal(idle, undefined, "one piece of work is still pending");
  pending.done();
  assert.equal(pending.count, 0);
  assert.equal(await first, true);
  assert.equal(await second, true, "every waiter is told");
});

Deno.test("PendingCount.track counts a promise until it fulfils or rejects", async () => {
  const pending = new PendingCount();
  const fulfil = Promise.withResolvers<number>();
  const reject = Promise.withResolvers<number>();
  pending.track(fulfil.promise);
  pending.track(reject.promise);
  assert.equal(pending.count, 2);
  fulfil.resolve(1);
  await fulfil.promise;
  await Promise.resolve();
  assert.equal(pending.count, 1);
  // Tracking adds a handler: the rejection is not reported as unhandled (Deno would fail the
  // test), and it still reaches whoever awaits the promise.
  reject.reject(new Error("refused"));
  await assert.rejects(reject.promise, /refused/);
  assert.equal(await pending.idle(60_000), true);
  assert.equal(pending.count, 0);
});

// The test sanitizer fails the test if the 60 s timer were left running.
Deno.test("PendingCount.idle gives up after its timeout and leaves no timer", async () => {
  const pending = new PendingCount();
  pending.track(new Promise(() => {}));
  assert.equal(await pending.idle(5), false);
  assert.equal(pending.count, 1);
  const other = new PendingCount();
  other.add();
  const waiting = other.idle(60_000);
  other.done();
  assert.equal(await waiting, true);
});
