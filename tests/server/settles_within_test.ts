import assert from "node:assert/strict";
import { settlesWithin } from "../../server/settles_within.ts";

Deno.test("settlesWithin: true for a promise that fulfils or rejects in time", async () => {
  assert.equal(await settlesWithin(Promise.resolve(1), 1_000), true);
  assert.equal(await settlesWithin(Promise.reject(new Error("no")), 1_000), true);
  const later = new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(await settlesWithin(later, 5_000), true);
});

// The test sanitizer fails the test if the 10 s timer were left running.
Deno.test("settlesWithin: false when the time passes first, and no timer is left", async () => {
  const never = new Promise(() => {});
  assert.equal(await settlesWithin(never, 20), false);
  assert.equal(await settlesWithin(Promise.resolve(), 10_000), true);
});
