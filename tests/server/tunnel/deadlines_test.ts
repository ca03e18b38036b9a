import assert from "node:assert/strict";
import { createDeadlines } from "../../../server/tunnel/deadlines.ts";

// The clock decides what has passed; the timers only wake the list up (any real delay is fine:
// a timer armed earlier for less time fires before a later, longer sleep).
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("deadlines expire oldest first, and only the ones still running", async () => {
  let clock = 0;
  const expired: string[] = [];
  const deadlines = createDeadlines<string>(10, (item) => expired.push(item), () => clock);
  const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map((item) => deadlines.add(item));
  assert.equal(deadlines.size, 5);
  // The middle, the oldest and the newest leave; the list stays whole around them.
  deadlines.remove(c);
  deadlines.remove(a);
  deadlines.remove(e);
  deadlines.remove(a); // twice: nothing changes
  assert.equal(deadlines.size, 2);
  await sleep(30);
  assert.deepEqual(expired, [], "nothing passes before its time");
  clock = 10;
  await sleep(30);
  assert.deepEqual(expired, ["b", "d"]);
  assert.equal(deadlines.size, 0);
  assert.equal(b.listed || d.listed, false);
});

Deno.test("a deadline added later expires later, on the timer re-armed for it", async () => {
  let clock = 0;
  const expired: string[] = [];
  const deadlines = createDeadlines<string>(10, (item) => expired.push(item), () => clock);
  const first = deadlines.add("first");
  clock = 5;
  deadlines.add("second");
  clock = 12;
  await sleep(30);
  assert.deepEqual(expired, ["first"], "the second has 3 ms to go");
  assert.equal(first.listed, false);
  assert.equal(deadlines.size, 1);
  clock = 15;
  await sleep(30);
  assert.deepEqual(expired, ["first", "second"]);
  assert.equal(deadlines.size, 0);
});

// The test sanitizer fails the test if a timer were left running once the list is empty.
Deno.test("no timer runs while no deadline does", () => {
  const deadlines = createDeadlines<number>(60_000, () => assert.fail("never expires"));
  const one = deadlines.add(1);
  const two = deadlines.add(2);
  deadlines.remove(two);
  deadlines.remove(one);
  assert.equal(deadlines.size, 0);
});
