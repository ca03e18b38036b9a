import assert from "node:assert/strict";
import {
  errorKey,
  ErrorLimit,
  FailureLog,
  framesStart,
  MAX_ENTRY_CHARS,
  OVERFLOW_KEY,
  permissionHint,
} from "../../../server/http/failure_log.ts";

const MINUTE = 60_000;

/** An error limit on a clock the test moves, and what it told. */
function limitOnClock(options: { perKey?: number; maxKeys?: number } = {}) {
  let nowMs = 0;
  const told: { total: number; named: string }[] = [];
  const limit = new ErrorLimit(
    { ...options, now: () => nowMs },
    (total, named) => told.push({ total, named }),
  );
  // Admits `error` at each of `times`, and says how many were admitted.
  const admitted = (error: unknown, times: number[]) =>
    times.filter((t) => (nowMs = t, limit.admit(error))).length;
  return { limit, told, admitted };
}

// An error without frames: its key is its message.
const bare = (message: string) => Object.assign(new Error(message), { stack: undefined });

Deno.test("ErrorLimit: at most 10 per minute per error; the rest told once a window", () => {
  const { limit, told, admitted } = limitOnClock();
  const a = bare("A");
  // One error every 100 ms for five minutes: 3000 errors.
  for (let minute = 0; minute < 5; minute++) {
    const times = Array.from({ length: 600 }, (_, i) => minute * MINUTE + i * 100);
    assert.equal(admitted(a, times), 10, `minute ${minute}`);
  }
  limit.flush();
  assert.deepEqual(told.map((t) => t.total), [590, 590, 590, 590, 590]);
  assert.equal(told[0].named, '590 of "Error: A"');
});

Deno.test("ErrorLimit: errors are limited separately", () => {
  const { limit, admitted } = limitOnClock();
  const times = Array.from({ length: 100 }, () => 0);
  assert.equal(admitted(bare("A"), times), 10);
  assert.equal(admitted(bare("B"), times), 10);
  assert.equal(admitted(bare("A"), [MINUTE - 1]), 0);
  assert.equal(admitted(bare("A"), [MINUTE]), 1);
  limit.flush();
});

Deno.test("ErrorLimit: tells once a window has passed, or at once on flush, and only once", () => {
  const { limit, told, admitted } = limitOnClock({ perKey: 1 });
  assert.equal(admitted(bare("A"), [0, 1, 2]), 1);
  assert.equal(admitted(bare("B"), [MINUTE - 1]), 1);
  assert.deepEqual(told, [], "not before a window has passed");
  assert.equal(admitted(bare("B"), [MINUTE]), 1, "a new window");
  assert.deepEqual(told, [{ total: 2, named: '2 of "Error: A"' }]);
  limit.flush();
  assert.equal(told.length, 1, "nothing held back since");
  assert.equal(admitted(bare("C"), [MINUTE + 1, MINUTE + 2]), 1);
  limit.flush();
  assert.deepEqual(told.at(-1), { total: 1, named: '1 of "Error: C"' });
});

Deno.test("ErrorLimit: a storm of distinct errors keeps the table and the events bounded", () => {
  const { limit, told, admitted } = limitOnClock({ maxKeys: 50 });
  let sent = 0;
  for (let i = 0; i < 100_000; i++) sent += admitted(bare(`id ${i}`), [i / 1000]);
  assert.equal(sent, 50 + 10, "one each for the 50 tracked errors, then 10 for all the others");
  limit.flush();
  assert.deepEqual(told, [{
    total: 100_000 - 60,
    named: `${100_000 - 60} of ${JSON.stringify(OVERFLOW_KEY)}`,
  }]);
});

Deno.test("ErrorLimit: one line, the worst first, at most three named", () => {
  const { limit, told, admitted } = limitOnClock({ perKey: 0 });
  for (const [message, count] of [["A", 1], ["B", 90], ["C", 5], ["D", 2]] as const) {
    admitted(bare(message), Array(count).fill(0));
  }
  limit.flush();
  assert.deepEqual(told, [{
    total: 98,
    named: '90 of "Error: B", 5 of "Error: C", 2 of "Error: D", and 1 more',
  }]);
});

Deno.test("errorKey: type and top frames, not the message; the message only without frames", () => {
  const a = new TypeError("x is undefined");
  const key = errorKey(a);
  assert.match(key, /^TypeError @ at .*failure_log_test\.ts\)?( < at .*)?/);
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

Deno.test("errorKey: an empty message keeps the error's own frames first, whatever follows them", () => {
  // A library appended its cause to the stack: the error's own frames still come first.
  const stack =
    "Wrapped\n    at own (a.ts:1:1)\n    at caller (b.ts:2:2)\nCaused by: Error: low\n" +
    "    at low (c.ts:3:3)";
  const error = Object.assign(new Error(), { name: "Wrapped", stack });
  assert.match(errorKey(error), /^Wrapped @ at own \(a\.ts\) < at caller/);
});

/** A failure log on a clock the test moves, and the entries it wrote. */
function logOnClock(options: { perKey?: number } = {}) {
  let nowMs = 0;
  const written: string[] = [];
  const log = new FailureLog({
    ...options,
    now: () => nowMs,
    write: (entry) => written.push(entry),
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
  assert.match(written[0], /^request failed: Error: no user 0\n {4}at noUser /);
  assert.match(written[9], /^request failed: Error: no user 9\n/);
  advance(MINUTE);
  log.failed("request failed:", otherFault());
  assert.match(
    written[10],
    /^request failed: 990 more failures not logged in full \(at most 10 per error every 60 s\): 990 of "Error @ at noUser /,
  );
  assert.match(written[11], /^request failed: TypeError: x is undefined/, "a new window");
  assert.equal(written.length, 12);
  log.flush();
});

Deno.test("distinct errors have budgets of their own", () => {
  const { log, written } = logOnClock({ perKey: 3 });
  for (let i = 0; i < 20; i++) {
    log.failed("request failed:", noUser(i));
    log.failed("request failed:", otherFault());
  }
  assert.equal(written.filter((entry) => entry.includes("TypeError")).length, 3);
  assert.equal(written.filter((entry) => entry.includes("no user")).length, 3);
  log.flush();
});

Deno.test("flush tells the count at once, and only once", () => {
  const { log, written } = logOnClock({ perKey: 1 });
  log.failed("request failed:", noUser(1));
  log.failed("request failed:", noUser(2));
  assert.equal(written.length, 1);
  log.flush();
  assert.equal(written.length, 2);
  assert.match(written[1], /^request failed: 1 more failures not logged in full/);
  log.flush();
  assert.equal(written.length, 2, "nothing held back since");
});

Deno.test("the count is told when the window ends, with no failure after it", async () => {
  const written: string[] = [];
  // The clock stands still, so every failure is in the first window; the timer still runs.
  const log = new FailureLog({
    perKey: 1,
    windowMs: 20,
    now: () => 0,
    write: (entry) => written.push(entry),
  });
  for (let id = 0; id < 5; id++) log.failed("request failed:", noUser(id));
  assert.equal(written.length, 1);
  for (let waited = 0; written.length < 2 && waited < 5_000; waited += 10) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.match(written[1] ?? "", /^request failed: 4 more failures not logged in full/);
  log.flush();
  assert.equal(written.length, 2);
});

Deno.test("any thrown value is logged, within one budget per kind, and never throws", () => {
  const { log, written } = logOnClock({ perKey: 2 });
  for (let i = 0; i < 5; i++) log.failed("request failed:", `thrown string ${i}`);
  assert.deepEqual(written, [
    "request failed: thrown string 0",
    "request failed: thrown string 1",
  ]);
  log.failed("request failed:", undefined);
  assert.equal(written.at(-1), "request failed: undefined");
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  log.failed("request failed:", revoked.proxy);
  assert.equal(written.at(-1), "request failed: (a value that cannot be shown: unreadable error)");
  log.flush();
  assert.match(written.at(-1)!, /3 of "thrown string"/);
});

Deno.test("an entry is cut to its size, however large the error's message", () => {
  const { log, written } = logOnClock();
  log.failed("request failed:", new Error("m".repeat(1_000_000)));
  log.failed("request failed:", "s".repeat(1_000_000));
  for (const entry of written) {
    assert.ok(entry.length < MAX_ENTRY_CHARS + 100, `${entry.length} characters`);
    assert.match(entry, /\.\.\. \(\d+ more characters\)$/);
  }
  log.flush();
});

Deno.test("an entry reads as one, whatever its message quotes: no forged entry, no terminal escape", () => {
  const { log, written } = logOnClock({ perKey: 2 });
  // A C0 escape, a carriage return, a NUL, C1's CSI and NEL, a byte-order mark (invisible, and
  // whitespace to a regular expression), a bidi override and a line separator.
  const forged = "\n\x1b[2Krequest failed: forged\r\n\u009b31m\u0085\ufeffrequest failed: " +
    "again\u202e\u2028\u2029START\x00";
  log.failed("request failed:", new Error(`bad input ${forged}`, { cause: new Error("below") }));
  log.failed("request failed:", `a string ${forged}`);
  // Over the limit, and without frames: the count line names the error by its message.
  const frameless = () => Object.assign(new Error(`frameless ${forged}`), { stack: undefined });
  for (let i = 0; i < 3; i++) log.failed("request failed:", frameless());
  log.flush();
  assert.equal(written.length, 5);
  for (const entry of written) {
    const lines = entry.split("\n");
    assert.deepEqual(lines.filter((line) => !/^[ \t]/.test(line)), [lines[0]], entry);
    assert.match(lines[0], /^request failed: /);
    assert.doesNotMatch(entry, /(?![\t\n])[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u);
  }
  // Written out, not dropped (the count line quotes its key as JSON).
  for (const entry of written.slice(0, 4)) {
    assert.match(entry, /\\x1b\[2Krequest failed: forged\\x0d/);
  }
  assert.match(written[0], /\\x9b31m\\x85\\u\{feff\}request failed: again\\u\{202e\}/);
  assert.match(written[0], /\[cause\]: Error: below/, "the cause is still shown");
  assert.match(written[4], /^request failed: 1 more failures not logged in full/);
});

Deno.test("a write that throws (stderr gone) does not reach the request", () => {
  const log = new FailureLog({
    write: () => {
      throw new Deno.errors.BrokenPipe("stderr closed");
    },
  });
  log.failed("request failed:", noUser(1));
  log.flush();
});

Deno.test("a permission the app's code lacks: one line naming what to add to deno.json", () => {
  const notCapable = (message: string) => new Deno.errors.NotCapable(message);
  const requires = (kind: string, value: string) =>
    notCapable(`Requires ${kind} access to "${value}", run again with the --allow-${kind} flag`);
  assert.equal(
    permissionHint(requires("env", "ACC_X")),
    'no env access to "ACC_X": add "ACC_X" to permissions.app.env in deno.json',
  );
  assert.match(permissionHint(requires("net", "127.0.0.1:9000"))!, /to permissions\.app\.net in/);
  assert.match(permissionHint(requires("read", "data/x.json"))!, /"data\/x\.json" to .*\.read/);
  // Every kind of Deno's permission sets is one deno.json's app set grants.
  assert.match(permissionHint(requires("write", "data"))!, /"data" to permissions\.app\.write in/);
  assert.match(permissionHint(requires("run", "curl"))!, /"curl" to permissions\.app\.run in/);
  assert.match(permissionHint(requires("sys", "hostname"))!, /to permissions\.app\.sys in/);
  // Other errors are logged as they are.
  assert.equal(permissionHint(new Error('Requires env access to "X", run again')), undefined);
  assert.equal(permissionHint(notCapable("something else")), undefined);
  // A value that could forge an entry is written out.
  assert.doesNotMatch(permissionHint(requires("env", "A\nrequest failed: x"))!, /\n/);

  const { log, written } = logOnClock();
  log.failed("request failed:", requires("env", "ACC_X"));
  assert.deepEqual(written, [
    'request failed: no env access to "ACC_X": add "ACC_X" to permissions.app.env in deno.json',
  ]);
  log.flush();
});
