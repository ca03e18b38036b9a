import assert from "node:assert/strict";
import { ClockOrigin, clockOrigin } from "../../../server/http/log_clock.ts";

const EXACT = 1_795_000_000_000.4567;

/** Readings of a wall clock `offset` ms ahead of the exact origin, at `at` on the other clock. */
function reading(at: number, offset: number, gap = 0.01): [number, number, number] {
  return [at, Math.floor(EXACT + at + gap / 2 + offset), at + gap];
}

Deno.test("ClockOrigin: stays exact while the wall clock agrees with it", () => {
  const clock = new ClockOrigin(EXACT);
  for (let at = 1; at < 5_000; at += 7.31) clock.observe(...reading(at, 0));
  assert.equal(clock.origin, EXACT);
});

Deno.test("ClockOrigin: follows a wall clock that is set, to within half a ms at once, then closer", () => {
  for (const offset of [5_000.3, -86_400_000.8, 0.7]) {
    const clock = new ClockOrigin(EXACT);
    clock.observe(...reading(10, offset));
    assert.ok(Math.abs(clock.origin - (EXACT + offset)) <= 0.63, `${offset}: first reading`);
    for (let at = 20; at < 2_000; at += 3.17) clock.observe(...reading(at, offset));
    assert.ok(Math.abs(clock.origin - (EXACT + offset)) < 0.05, `${offset}: after many`);
  }
});

Deno.test("ClockOrigin: a reading with a pause between its parts is ignored", () => {
  const clock = new ClockOrigin(EXACT);
  // The wall clock was set 5 s ahead while the thread stood still for 3 ms between readings:
  // such a reading bounds the offset only to within 3 ms, and the next one does better.
  clock.observe(100, Math.floor(EXACT + 103 + 5_000), 103);
  assert.equal(clock.origin, EXACT);
  clock.observe(...reading(110, 5_000));
  assert.ok(Math.abs(clock.origin - (EXACT + 5_000)) <= 0.63);
});

Deno.test("ClockOrigin: a slow drift is followed", () => {
  const clock = new ClockOrigin(EXACT);
  // 100 ppm: 0.1 ms a second, over 60 seconds of readings every 50 ms.
  for (let at = 0; at < 60_000; at += 50) clock.observe(...reading(at, at * 1e-4));
  assert.ok(Math.abs(clock.origin - (EXACT + 6)) < 0.6, `${clock.origin - EXACT}`);
});

Deno.test("clockOrigin: readings of the real clocks put no line a millisecond off beyond rare ones", () => {
  // Measured once and used for the readings after it, as the log does with a batch. An origin
  // from Date.now() alone (whole milliseconds) put about 14% of them a millisecond early.
  let off = 0;
  let readings = 0;
  for (let batch = 0; batch < 100; batch++) {
    const origin = clockOrigin();
    for (let i = 0; i < 500; i++, readings++) {
      const before = Date.now();
      const logged = Math.floor(origin + performance.now());
      const after = Date.now();
      if (logged < before || logged > after) off++;
    }
  }
  assert.ok(off < readings / 100, `${off} of ${readings} readings off by a millisecond`);
});
