import assert from "node:assert/strict";
import { AbortSwitch } from "../../../server/tunnel/abort_switch.ts";

Deno.test("abort calls each listener once, with the reason given, and later calls change nothing", () => {
  const stop = new AbortSwitch();
  const calls: string[] = [];
  stop.onAbort(() => calls.push("a"));
  stop.onAbort(() => calls.push("b"));
  assert.equal(stop.aborted, false);
  assert.equal(stop.reason, undefined);
  const reason = new Error("client gone");
  stop.abort(reason);
  stop.abort(new Error("again"));
  assert.deepEqual(calls, ["a", "b"]);
  assert.equal(stop.aborted, true);
  assert.equal(stop.reason, reason);
  // Too late to hear of it: the caller checks `aborted` first.
  stop.onAbort(() => calls.push("late"));
  assert.deepEqual(calls, ["a", "b"]);
});

Deno.test("the default reason is an AbortError, as AbortController's", () => {
  const stop = new AbortSwitch();
  stop.abort();
  assert.ok(stop.reason instanceof DOMException);
  assert.equal((stop.reason as DOMException).name, "AbortError");
});

Deno.test("its signal follows the switch, whether asked for before or after the abort", () => {
  const before = new AbortSwitch();
  const signal = before.signal;
  assert.equal(signal.aborted, false);
  assert.equal(before.signal, signal, "one signal per switch");
  const reason = new Error("deadline");
  before.abort(reason);
  assert.equal(signal.aborted, true);
  assert.equal(signal.reason, reason);

  const after = new AbortSwitch();
  after.abort(reason);
  assert.equal(after.signal.aborted, true);
  assert.equal(after.signal.reason, reason);
});

Deno.test("a listener that throws does not keep the others from running", () => {
  const stop = new AbortSwitch();
  const calls: string[] = [];
  const errors: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => errors.push(args);
  try {
    stop.onAbort(() => {
      throw new Error("broken listener");
    });
    stop.onAbort(() => calls.push("second"));
    stop.abort();
  } finally {
    console.error = original;
  }
  assert.deepEqual(calls, ["second"]);
  assert.equal(errors.length, 1);
});
