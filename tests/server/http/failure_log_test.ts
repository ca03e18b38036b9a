import assert from "node:assert/strict";
import { FailureLog } from "../../../server/http/failure_log.ts";

const MINUTE = 60_000;

/** A failure log on a clock the test moves, and what it wrote. */
function logOnClock(options: { perKey?: number } = {}) {
  let nowMs = 0;
  const written: { line: string; error?: unknown }[] = [];
  const log = new FailureLog({
    ...options,
    now: () => nowMs,
    write: (line, error) => written.push({ line, error }),
  });
  return { log, written, advance: (ms: number) => nowMs += ms };
}

// One throw site; the message carries request data, as real ones do.
function noUser(id: number): Error {
  return new Error(`no user ${id}`);
}

function otherFault(): Error {
  return new TypeError("x is undefined");
}

Deno.test("a storm of one failure: ten logged in full, the rest counted in one line a window", () => {
  const { log, written, advance } = logOnClock();
  for (let id = 0; id < 1000; id++) log.failed("request failed:", noUser(id));
  assert.equal(written.length, 10);
  assert.ok(written.every((entry) => entry.line === "request failed:"));
  assert.deepEqual(written.map((entry) => (entry.error as Error).message).slice(0, 2), [
    "no user 0",
    "no user 1",
  ]);
  advance(MINUTE);
  log.failed("request failed:", otherFault());
  const [count, next] = written.slice(10);
  assert.match(
    count.line,
    /^request failed: 990 more failures not logged in full \(at most 10 per error every 60 s\): 990 of "Error @ at noUser /,
  );
  assert.equal(count.error, undefined);
  assert.ok(next.error instanceof TypeError, "a new window logs in full again");
  log.flush();
});

Deno.test("distinct errors have budgets of their own", () => {
  const { log, written } = logOnClock({ perKey: 3 });
  for (let i = 0; i < 20; i++) {
    log.failed("request failed:", noUser(i));
    log.failed("request failed:", otherFault());
  }
  assert.equal(written.filter((entry) => entry.error instanceof TypeError).length, 3);
  assert.equal(written.filter((entry) => !(entry.error instanceof TypeError)).length, 3);
  log.flush();
});

Deno.test("flush tells the count at once, and only once", () => {
  const { log, written } = logOnClock({ perKey: 1 });
  log.failed("request failed:", noUser(1));
  log.failed("request failed:", noUser(2));
  assert.equal(written.length, 1);
  log.flush();
  assert.equal(written.length, 2);
  assert.match(written[1].line, /^request failed: 1 more failures not logged in full/);
  log.flush();
  assert.equal(written.length, 2, "nothing held back since");
});

Deno.test("the count is told when the window ends, with no failure after it", async () => {
  const written: string[] = [];
  const log = new FailureLog({ perKey: 1, windowMs: 20, write: (line) => written.push(line) });
  for (let id = 0; id < 5; id++) log.failed("request failed:", noUser(id));
  assert.deepEqual(written, ["request failed:"]);
  for (let waited = 0; written.length < 2 && waited < 5_000; waited += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.match(written[1] ?? "", /^request failed: 4 more failures not logged in full/);
  log.flush();
  assert.equal(written.length, 2);
});

Deno.test("what is not an Error is logged too, within one budget per kind", () => {
  const { log, written } = logOnClock({ perKey: 2 });
  for (let i = 0; i < 5; i++) log.failed("request failed:", `thrown string ${i}`);
  assert.deepEqual(written.map((entry) => entry.error), ["thrown string 0", "thrown string 1"]);
  log.flush();
  assert.match(written[2].line, /3 of "thrown string"/);
});
