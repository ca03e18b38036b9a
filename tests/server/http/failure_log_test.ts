import assert from "node:assert/strict";
import { FailureLog, MAX_ENTRY_CHARS, permissionHint } from "../../../server/http/failure_log.ts";

const MINUTE = 60_000;

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
  // Kinds deno.json's app set does not grant, and other errors, are logged as they are.
  assert.equal(permissionHint(requires("run", "curl")), undefined);
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
