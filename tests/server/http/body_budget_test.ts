import assert from "node:assert/strict";
import {
  BODY_DEFAULTS,
  createBodyBudget,
  MAX_BODIES,
  MAX_CLIENT_BODIES,
  refusedBody,
  STALLED_MS,
} from "../../../server/http/body_budget.ts";

const limits = { ...BODY_DEFAULTS, clientLimits: true };

/** A budget on a clock the test moves, and the names of the bodies it stalled. */
function budgetAt(memoryBytes = BODY_DEFAULTS.memoryBytes, clientLimits = true) {
  let now = 0;
  const stalled: string[] = [];
  const budget = createBodyBudget({ ...limits, memoryBytes, clientLimits }, () => now);
  const enter = (key: string, need = 0, name = key) =>
    budget.enter(key, need, () => stalled.push(name));
  return { budget, enter, stalled, advance: (ms: number) => now += ms };
}

Deno.test("deadline: the read timeout while a read waits, else the minimum rate past the grace", () => {
  const { budget, enter } = budgetAt();
  const place = enter("a")!; // read from 0 on
  // The grace is half the read timeout: 5 s, then 8 KiB a second on average.
  assert.equal(budget.deadline(place, 0, null), 5_000);
  assert.equal(budget.deadline(place, 8 * 1024 * 10, null), 15_000);
  assert.equal(budget.deadline(place, 8 * 1024 * 10, 2_000), 12_000);
  assert.equal(budget.deadline(place, 0, 2_000), 5_000);
  // A 1.5 Mbit/s uplink for 100 s (18.75 MB): its deadline stays 700 s ahead of the clock.
  assert.ok(budget.deadline(place, 1.5e6 / 8 * 100, null) > 100_000 + 700_000);
  // The 64 KB/s of the 6 MB test: ahead of the clock by more than the grace after every second.
  for (let t = 1; t <= 100; t++) assert.ok(budget.deadline(place, 64_000 * t, null) > t * 1000);
  // A byte every 10 s: past its deadline before its second byte.
  assert.ok(budget.deadline(place, 1, null) < 10_000);
});

Deno.test("budget: a client past its places is refused unless one of its bodies is stalled", () => {
  const { enter, stalled, advance } = budgetAt();
  for (let i = 0; i < MAX_CLIENT_BODIES; i++) assert.ok(enter("a", 0, `a${i}`));
  assert.equal(enter("a"), undefined);
  // Another client is not held up by them.
  assert.ok(enter("b"));
  // Past STALLED_MS without a byte, the most stalled of a's bodies gives way, one per newcomer.
  advance(STALLED_MS + 1);
  assert.ok(enter("a", 0, "new"));
  assert.deepEqual(stalled, ["a0"]);
});

Deno.test("budget: a body read to its end is never pushed out, however long its answer takes", () => {
  const { enter, stalled, advance } = budgetAt();
  const places = Array.from({ length: MAX_CLIENT_BODIES }, (_, i) => enter("a", 0, `a${i}`)!);
  for (const place of places) place.ended = true;
  advance(60_000);
  assert.equal(enter("a"), undefined);
  assert.deepEqual(stalled, []);
});

Deno.test("budget: a body that keeps up with the minimum rate is not pushed out", () => {
  const { budget, enter, stalled, advance } = budgetAt();
  const places = Array.from({ length: MAX_CLIENT_BODIES }, (_, i) => enter("a", 0, `a${i}`)!);
  advance(10_000);
  for (const place of places) assert.ok(budget.receive(place, 10 * limits.minRate));
  assert.equal(enter("a"), undefined);
  assert.deepEqual(stalled, []);
});

Deno.test("budget: past MAX_BODIES a newcomer pushes out a stalled body, else is refused", () => {
  const { budget, enter, stalled, advance } = budgetAt(BODY_DEFAULTS.memoryBytes, false);
  const first = Array.from({ length: MAX_BODIES }, (_, i) => enter(String(i))!);
  assert.equal(enter("x"), undefined);
  budget.leave(first[0]);
  budget.leave(first[0]); // a second leave gives nothing back
  assert.ok(enter("x"));
  assert.equal(enter("y"), undefined);
  advance(STALLED_MS + 1);
  budget.receive(first[1], 100 * limits.minRate); // far ahead of the rate: the others go first
  assert.ok(enter("y"));
  assert.deepEqual(stalled, ["2"]);
});

Deno.test("budget: bytes are charged as they arrive, per client (half) and overall", () => {
  const { budget, enter } = budgetAt(1000);
  // A declared body reserves its length; its bytes up to it cost nothing more.
  const a = enter("a", 400)!;
  assert.ok(budget.receive(a, 400));
  assert.equal(enter("a", 101), undefined, "over a's half of 1000");
  const b = enter("b", 0)!;
  assert.ok(budget.receive(b, 500));
  assert.equal(budget.receive(b, 1), false, "over b's half");
  const c = enter("c", 0)!;
  assert.equal(budget.receive(c, 101), false, "over the whole 1000");
  // What a body held comes back when it leaves.
  budget.leave(a);
  assert.ok(budget.receive(enter("d")!, 400));
  // Per-client limits off: one client may hold it all.
  const open = budgetAt(1000, false);
  assert.ok(open.budget.receive(open.enter("a", 600)!, 900));
});

Deno.test("budget: linear work: a newcomer looks at most at MAX_BODIES places, whatever the load", () => {
  // Counted through the places: the stalled-body search reads each one's `received` once.
  let looks = 0;
  const budget = createBodyBudget({ ...limits, clientLimits: false }, () => 0);
  for (let i = 0; i < MAX_BODIES; i++) {
    const place = budget.enter(String(i), 0, () => {})!;
    Object.defineProperty(place, "received", { get: () => (looks++, 0) });
  }
  // The worst case: the places are full and nothing is stalled, so each newcomer looks at all.
  const n = 5_000;
  for (let i = 0; i < n; i++) assert.equal(budget.enter(`x${i}`, 0, () => {}), undefined);
  assert.equal(looks, n * MAX_BODIES);
});

Deno.test("refusedBody: 408 for a slow body, naming the settings; 503 with Retry-After when busy", () => {
  assert.deepEqual(refusedBody("timeout", limits), {
    status: 408,
    reason: "request body too slow: nothing for 10000 ms, or under 8192 bytes/s",
  });
  assert.deepEqual(refusedBody("busy", limits)?.headers, { "retry-after": "5" });
  assert.equal(refusedBody("client", limits), undefined);
});
