import assert from "node:assert/strict";
import {
  BODY_DEFAULTS,
  createBodyBudget,
  MAX_BODIES,
  MAX_CLIENT_BODIES,
  type Place,
  PUSH_OUT_PACE,
  RATE_WINDOW_MS,
  refusedBody,
} from "../../../server/http/body_budget.ts";

const limits = { ...BODY_DEFAULTS, clientLimits: true };
/** A body that is never late. */
const idle = { stop() {}, due: () => Infinity };

/** A budget on a clock the test moves, and the names of the bodies it pushed out; disposed, every
 * body has left (the budget's sweep timer runs while any is in). */
function budgetAt(memoryBytes = BODY_DEFAULTS.memoryBytes, clientLimits = true) {
  let now = 0;
  const pushed: string[] = [];
  const places: Place[] = [];
  const budget = createBodyBudget({ ...limits, memoryBytes, clientLimits }, () => now);
  const enter = (key: string, name = key, cost = 1) => {
    const place = budget.enter(key, { ...idle, stop: () => pushed.push(name) }, cost);
    if (place) places.push(place);
    return place;
  };
  const advance = (ms: number) => now += ms;
  return { budget, enter, pushed, advance, [Symbol.dispose]: () => places.forEach(budget.leave) };
}

const { minRate } = limits;

Deno.test("deadline: the read timeout while a read waits, else the minimum rate past the grace", () => {
  using fixture = budgetAt();
  const { budget, enter } = fixture;
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

Deno.test("budget: a client past its places pushes out its slowest body, never a young one", () => {
  using fixture = budgetAt();
  const { budget, enter, pushed, advance } = fixture;
  const places = Array.from({ length: MAX_CLIENT_BODIES }, (_, i) => enter("a", `a${i}`)!);
  assert.equal(enter("a"), undefined, "all younger than RATE_WINDOW_MS");
  // Another client is not held up by them.
  assert.ok(enter("b"));
  // Past RATE_WINDOW_MS, the one with the lowest rate for what it holds gives way.
  for (const place of places) budget.receive(place, 4000);
  for (let s = 0; s < 2; s++) {
    advance(RATE_WINDOW_MS);
    places.forEach((place, i) => budget.receive(place, i === 3 ? 500 : 2000));
  }
  assert.ok(enter("a", "new"));
  assert.deepEqual(pushed, ["a3"]);
});

Deno.test("budget: a body read to its end, or keeping twice the minimum rate, is not pushed out", () => {
  using fixture = budgetAt();
  const { budget, enter, pushed, advance } = fixture;
  const places = Array.from({ length: MAX_CLIENT_BODIES }, (_, i) => enter("a", `a${i}`)!);
  places[0].ended = true;
  for (let s = 0; s < 60; s++) {
    advance(1000);
    for (const place of places.slice(1)) assert.ok(budget.receive(place, PUSH_OUT_PACE * minRate));
  }
  assert.equal(enter("a"), undefined);
  assert.deepEqual(pushed, []);
});

Deno.test("budget: past MAX_BODIES a newcomer pushes out a slow body, else is refused", () => {
  using fixture = budgetAt(BODY_DEFAULTS.memoryBytes, false);
  const { budget, enter, pushed, advance } = fixture;
  const first = Array.from({ length: MAX_BODIES }, (_, i) => enter(String(i))!);
  assert.equal(enter("x"), undefined);
  budget.leave(first[0]);
  budget.leave(first[0]); // a second leave gives nothing back
  assert.ok(enter("x"));
  assert.equal(enter("y"), undefined);
  advance(RATE_WINDOW_MS);
  // All fast, but one, which holds as much and sends nothing more.
  for (const place of first.slice(1)) budget.receive(place, 10 * minRate);
  advance(RATE_WINDOW_MS);
  for (const place of first.slice(1)) budget.receive(place, place === first[2] ? 0 : 10 * minRate);
  assert.ok(enter("y"));
  assert.deepEqual(pushed, ["2"]);
});

Deno.test("budget: bytes are charged as they arrive (times their cost), per client (half) and overall", () => {
  using fixture = budgetAt(1000);
  const { budget, enter } = fixture;
  const a = enter("a", "a", 4)!;
  assert.ok(budget.receive(a, 100));
  assert.equal(budget.receive(a, 26), false, "over a's half of 1000");
  const b = enter("b")!;
  assert.ok(budget.receive(b, 500));
  assert.equal(budget.receive(b, 1), false, "over b's half");
  const c = enter("c")!;
  assert.equal(budget.receive(c, 101), false, "over the whole 1000, none slow to push out");
  // What a body held comes back when it leaves.
  budget.leave(a);
  assert.ok(budget.receive(enter("d")!, 400));
  // Per-client limits off: one client may hold it all.
  using open = budgetAt(1000, false);
  assert.ok(open.budget.receive(open.enter("a")!, 1000));
});

Deno.test("budget: a body that sent much, then trickles, gives its bytes to a newcomer", () => {
  // The review's attack, its worst form: 2 addresses x 2 bodies send almost 16 MiB at once,
  // then keep the minimum rate: the 64 MiB are taken, and a third address's 128 KiB must fit.
  using fixture = budgetAt();
  const { budget, enter, pushed, advance } = fixture;
  const hogs = ["a", "a", "b", "b"].map((key, i) => enter(key, `${key}${i}`)!);
  for (const hog of hogs) assert.ok(budget.receive(hog, (16 << 20) - 4 * minRate));
  const [honest, need] = [enter("c")!, 16 * minRate + 1]; // what is left free, and a byte
  assert.equal(budget.receive(honest, need), false, "young bodies are not pushed out");
  for (let s = 0; s < 3; s++) {
    advance(1000);
    hogs.forEach((hog, i) => assert.ok(budget.receive(hog, minRate - i))); // the last, slowest
  }
  assert.ok(budget.receive(honest, need));
  assert.deepEqual(pushed, ["b3"]);
});

Deno.test("budget: linear work: a newcomer looks at most at MAX_BODIES places, whatever the load", () => {
  // Counted through the places: the push-out search reads each one's marks once.
  let looks = 0;
  let now = 0;
  const budget = createBodyBudget({ ...limits, clientLimits: false }, () => now);
  const places = Array.from({ length: MAX_BODIES }, (_, i) => budget.enter(String(i), idle)!);
  for (const place of places) {
    budget.receive(place, minRate * 10);
    const { marks } = place;
    Object.defineProperty(place, "marks", { get: () => (looks++, marks) });
  }
  now += RATE_WINDOW_MS;
  // The worst case: the places are full and all keep pace, so each newcomer looks at all.
  const n = 5_000;
  for (let i = 0; i < n; i++) assert.equal(budget.enter(`x${i}`, idle), undefined);
  assert.equal(looks, n * MAX_BODIES);
  places.forEach(budget.leave);
});

Deno.test("refusedBody: 408 for a slow body, naming the settings; 503 with Retry-After when busy", () => {
  assert.deepEqual(refusedBody("timeout", limits), {
    status: 408,
    reason: "request body too slow: nothing for 10000 ms, or under 8192 bytes/s",
  });
  assert.deepEqual(refusedBody("busy", limits)?.headers, { "retry-after": "5" });
  assert.equal(refusedBody("client", limits), undefined);
});
