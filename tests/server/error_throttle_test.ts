import assert from "node:assert/strict";
import {
  errorKey,
  ErrorThrottle,
  formatSuppressed,
  framesStart,
  OVERFLOW_KEY,
} from "../../server/error_throttle.ts";

const MINUTE = 60_000;

function admitted(throttle: ErrorThrottle, key: string, times: number[]): number {
  return times.filter((t) => throttle.admit(key, t)).length;
}

Deno.test("ErrorThrottle: at most 10 per minute per key", () => {
  const throttle = new ErrorThrottle({}, 0);
  // One error every 100 ms for five minutes: 3000 errors.
  const times = Array.from({ length: 3000 }, (_, i) => i * 100);
  const sent: number[] = times.filter((t) => throttle.admit("A", t));
  assert.equal(sent.length, 50, "10 in each of five minutes");
  for (let minute = 0; minute < 5; minute++) {
    const within = sent.filter((t) => t >= minute * MINUTE && t < (minute + 1) * MINUTE);
    assert.equal(within.length, 10, `minute ${minute}`);
  }
  assert.deepEqual(throttle.report(5 * MINUTE), [{ key: "A", count: 2950 }]);
});

Deno.test("ErrorThrottle: keys are limited separately", () => {
  const throttle = new ErrorThrottle({}, 0);
  const times = Array.from({ length: 100 }, () => 0);
  assert.equal(admitted(throttle, "A", times), 10);
  assert.equal(admitted(throttle, "B", times), 10);
  assert.equal(admitted(throttle, "A", [MINUTE - 1]), 0);
  assert.equal(admitted(throttle, "A", [MINUTE]), 1);
});

Deno.test("ErrorThrottle: reports once per window, then forgets quiet keys", () => {
  const throttle = new ErrorThrottle({ perKey: 1 }, 0);
  assert.equal(admitted(throttle, "A", [0, 1, 2]), 1);
  assert.equal(throttle.report(MINUTE - 1), undefined, "not before a window has passed");
  assert.deepEqual(throttle.report(MINUTE), [{ key: "A", count: 2 }]);
  assert.deepEqual(throttle.report(2 * MINUTE), [], "counts are reset by a report");
  assert.equal(throttle.size, 0, "a key with nothing in the window is forgotten");
  assert.equal(admitted(throttle, "B", [2 * MINUTE + 1, 2 * MINUTE + 2]), 1);
  assert.deepEqual(throttle.report(2 * MINUTE + 3, true), [{ key: "B", count: 1 }], "forced");
});

Deno.test("ErrorThrottle: a storm of distinct errors keeps the table and the events bounded", () => {
  const throttle = new ErrorThrottle({ maxKeys: 50 }, 0);
  let sent = 0;
  for (let i = 0; i < 100_000; i++) if (throttle.admit(`Error: id ${i}`, i / 1000)) sent++;
  assert.ok(throttle.size <= 51, `table holds ${throttle.size}`);
  assert.equal(sent, 50 + 10, "one each for the 50 tracked keys, then 10 for all the others");
  const report = throttle.report(MINUTE, true) ?? [];
  assert.deepEqual(report, [{ key: OVERFLOW_KEY, count: 100_000 - 60 }]);
});

Deno.test("ErrorThrottle: a new window makes room for new keys, keeping what is unreported", () => {
  const throttle = new ErrorThrottle({ maxKeys: 2, perKey: 1 }, 0);
  throttle.admit("A", 0);
  throttle.admit("B", 0);
  assert.equal(throttle.admit("B", 0), false);
  throttle.admit("C", 1);
  assert.equal(throttle.size, 3, "A, B and the shared overflow key");
  assert.equal(throttle.admit("D", MINUTE + 1), true, "a new window");
  assert.equal(throttle.size, 2, "B keeps its unreported count; D is new");
  assert.deepEqual(throttle.report(MINUTE + 2, true), [{ key: "B", count: 1 }]);
  assert.equal(throttle.size, 0);
});

Deno.test("errorKey: type and top frames, not the message; the message only without frames", () => {
  const a = new TypeError("x is undefined");
  const key = errorKey(a);
  assert.match(key, /^TypeError @ at .*error_throttle_test\.ts\)?( < at .*)?/);
  assert.ok(!key.includes("\n"));
  assert.ok(!key.includes("x is undefined"));
  const throwAt = (message: string) => new Error(message);
  assert.equal(errorKey(throwAt("same")), errorKey(throwAt("same")), "same place, same key");
  // Request data in the message: still one error, one budget.
  assert.equal(errorKey(throwAt("no user 1")), errorKey(throwAt("no user 2")));
  assert.notEqual(errorKey(new Error("same")), errorKey(throwAt("same")), "other function");
  const twoLines = (second: boolean) => second ? new Error("same") : new Error("same");
  assert.equal(errorKey(twoLines(false)), errorKey(twoLines(true)), "one function, one key");
  // A shared helper called from two places: two errors.
  const helper = () => new Error("bad input");
  const callerA = () => helper();
  const callerB = () => helper();
  assert.notEqual(errorKey(callerA()), errorKey(callerB()));
  const huge = new Error("m".repeat(1_000_000));
  huge.stack = `Error: ${"m".repeat(1_000_000)}\n    at ${"f".repeat(1_000_000)} (x.ts:1:1)`;
  assert.ok(errorKey(huge).length < 1_000);
  // Without frames the message tells errors apart, cut to a bounded length.
  const bare = (message: string) => Object.assign(new Error(message), { stack: undefined });
  assert.notEqual(errorKey(bare("a")), errorKey(bare("b")));
  assert.ok(errorKey(bare("m".repeat(1_000_000))).length < 600);
  assert.equal(errorKey("a string"), "thrown string");
  assert.equal(errorKey(undefined), "thrown undefined");
  const hostile = new Error("x");
  Object.defineProperty(hostile, "name", {
    get() {
      throw new Error("no name for you");
    },
  });
  assert.equal(errorKey(hostile), "unreadable error");
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  assert.equal(errorKey(revoked.proxy), "unreadable error");
});

Deno.test("errorKey: frames written into a message do not make a key", () => {
  // V8's JSON.parse error quotes the text it was given, line breaks included.
  const parseError = (text: string) => {
    try {
      JSON.parse(text);
    } catch (error) {
      return error;
    }
  };
  const planted = (n: number) => parseError(`[1,\n    at p${n} (`);
  assert.match(String((planted(1) as Error).message), /\n {4}at p1/);
  assert.equal(errorKey(planted(1)), errorKey(planted(2)));
  assert.doesNotMatch(errorKey(planted(1)), /at p1/);
  assert.match(errorKey(planted(1)), /^SyntaxError @ at /);
  // The stack read (logged, say) before the message was changed: the stack's first line no
  // longer holds the message, and the frames are the run of frame lines that ends the stack.
  const rewrapped = (n: number) => {
    const error = planted(n) as Error;
    void error.stack;
    error.message = `invalid body: ${error.message}`;
    return error;
  };
  assert.equal(errorKey(rewrapped(1)), errorKey(rewrapped(2)));
  assert.doesNotMatch(errorKey(rewrapped(1)), /at p1/);
  assert.match(errorKey(rewrapped(1)), /^SyntaxError @ at JSON\.parse/);
});

Deno.test("framesStart: after the message, else where the stack's closing run of frames begins", () => {
  const stack = "Error: boom\n    at f (a.ts:1:1)\n    at a.ts:2:2";
  assert.equal(framesStart(stack, "boom"), "Error: boom".length);
  assert.equal(framesStart(stack, "changed since"), "Error: boom".length);
  // A line that starts like a frame but does not end like one stops the run.
  const odd = 'E: "x\n    at p (" is not valid JSON\n    at g (b.ts:3:4)';
  assert.equal(odd.slice(framesStart(odd, "other")), "\n    at g (b.ts:3:4)");
  assert.equal(framesStart("no frames at all", "x"), "no frames at all".length);
  assert.equal(framesStart("\n    at only (c.ts:1:1)", "x"), 0);
});

Deno.test("framesStart: an empty message ends with the first line, whatever follows the frames", () => {
  // A library appended its cause to the stack: the error's own frames still come first.
  const stack =
    "Wrapped\n    at own (a.ts:1:1)\n    at caller (b.ts:2:2)\nCaused by: Error: low\n" +
    "    at low (c.ts:3:3)";
  assert.equal(framesStart(stack, ""), "Wrapped".length);
  const error = Object.assign(new Error(), { name: "Wrapped", stack });
  assert.match(errorKey(error), /^Wrapped @ at own \(a\.ts\) < at caller/);
  assert.equal(framesStart("Error", ""), "Error".length);
});

Deno.test("formatSuppressed: one line, the worst first, nothing when nothing was held back", () => {
  const lead = (n: number) => `${n} held back`;
  assert.equal(formatSuppressed([], lead), undefined);
  const line = formatSuppressed([
    { key: "A", count: 1 },
    { key: "B", count: 90 },
    { key: "C", count: 5 },
    { key: "D", count: 2 },
  ], lead);
  assert.equal(line, '98 held back: 90 of "B", 5 of "C", 2 of "D", and 1 more');
});
