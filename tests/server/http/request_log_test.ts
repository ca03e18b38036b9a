import assert from "node:assert/strict";
import {
  createLogWriter,
  formatRecord,
  formatRefusal,
  type RequestRecord,
} from "../../../server/http/request_log.ts";
import { fixtureApp } from "../../fixtures/app.ts";

const TIME = "2026-11-22T06:00:00.000Z";
const record: RequestRecord = {
  time: TIME,
  method: "GET",
  path: "/a b",
  status: 200,
  durationMs: 1.5,
  bytes: 42,
  requestId: "r-1",
};

// What a logged string must never carry raw: C0 controls, C1 controls, bidi controls, U+FEFF,
// and line separators and directional marks.
// deno-lint-ignore no-control-regex
const RAW = /[\u0000-\u001f\u0080-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/;

Deno.test("formatRecord: one JSON line with its fields in order, or one text line", () => {
  assert.equal(
    formatRecord(record, "json"),
    `{"time":"${TIME}","method":"GET","path":"/a b","status":200,"durationMs":1.5,"bytes":42,"requestId":"r-1"}`,
  );
  assert.equal(JSON.parse(formatRecord({ ...record, bytes: null }, "json")).bytes, null);
  assert.equal(formatRecord(record, "text"), `${TIME} GET "/a b" 200 1.5ms 42B r-1`);
  assert.equal(
    formatRecord({ ...record, bytes: null }, "text"),
    `${TIME} GET "/a b" 200 1.5ms -B r-1`,
  );
  for (const field of ["path", "method", "requestId"]) {
    const hostile = formatRecord({ ...record, [field]: "/x\ny\r" }, "text");
    assert.ok(!/[\n\r]/.test(hostile), `the ${field} cannot forge a second line`);
  }
});

Deno.test("formatRecord: any path, method or id round-trips through JSON, on one line, escaped", () => {
  const samples = ["/", '/"q"', "/back\\slash", "/tab\t", "/\u0000", "/é", "/\u2028", "/\ud800"];
  for (let i = 0; i < 2000; i++) {
    const chars = Array.from({ length: i % 12 }, () => String.fromCharCode(Math.random() * 0x2100));
    samples.push("/" + chars.join("") + (i % 7 === 0 ? "\ufeff" : ""));
  }
  for (const text of samples) {
    const line = formatRecord({ ...record, method: text, path: text, requestId: text }, "json");
    assert.ok(!RAW.test(line), JSON.stringify(text));
    const parsed = JSON.parse(line);
    assert.deepEqual([parsed.method, parsed.path, parsed.requestId], [text, text, text]);
  }
});

Deno.test("C1 controls, bidi controls and U+FEFF are escaped in both formats", () => {
  const hostile = "/\u001b\u0085\u009f\u202a\u202e\u2066\u2069\ufeff\u2028\u200f";
  const escaped = "/\\u001b\\u0085\\u009f\\u202a\\u202e\\u2066\\u2069\\ufeff\\u2028\\u200f";
  for (const field of ["method", "path", "requestId"] as const) {
    const json = formatRecord({ ...record, [field]: hostile }, "json");
    assert.ok(!RAW.test(json) && json.includes(`"${escaped}"`), json);
    assert.equal(JSON.parse(json)[field], hostile);
    const text = formatRecord({ ...record, [field]: hostile }, "text");
    assert.ok(!RAW.test(text) && text.includes(escaped), text);
  }
  // A format character outside the BMP: two escapes, still valid JSON.
  const tag = formatRecord({ ...record, path: "/\u{e0001}" }, "json");
  assert.ok(tag.includes("\\udb40\\udc01"), tag);
  assert.equal(JSON.parse(tag).path, "/\u{e0001}");
  const refusal = { reason: hostile, status: 400, client: hostile, count: 1, bytes: 9 };
  for (const format of ["json", "text"] as const) {
    const line = formatRefusal(refusal, hostile, format, TIME);
    assert.ok(!RAW.test(line) && line.split(escaped).length === 4, line);
  }
});

Deno.test("formatRefusal: one JSON or text line; the reason cannot break the line", () => {
  const refusal = { reason: "bad\nline", status: 400, client: "1.2.3.4", count: 3, bytes: 9 };
  assert.equal(
    formatRefusal(refusal, "r-1", "json", TIME),
    `{"time":"${TIME}","msg":"refused","count":3,"status":400,"reason":"bad\\nline",` +
      `"client":"1.2.3.4","bytes":9,"requestId":"r-1"}`,
  );
  const text = formatRefusal(refusal, undefined, "text", TIME);
  assert.equal(text, `${TIME} refused 3 x 400 "bad\\nline" from 1.2.3.4 9B -`);
});

// An output that takes a write only when told to: a stdout that has stopped keeping up.
function stalledOutput() {
  const waiting: { text: string; done: (n: number) => void; fail: (e: Error) => void }[] = [];
  const written: string[] = [];
  return {
    written,
    waiting,
    write: (bytes: Uint8Array) =>
      new Promise<number>((done, fail) =>
        waiting.push({ text: new TextDecoder().decode(bytes), done, fail })
      ),
    /** Let the oldest waiting write finish, fail, or write only its first `partly` bytes. */
    release(ok = true, partly?: number) {
      const next = waiting.shift()!;
      if (partly !== undefined) {
        written.push(next.text.slice(0, partly));
        next.done(partly);
      } else if (ok) {
        written.push(next.text);
        next.done(next.text.length);
      } else next.fail(new Error("broken pipe"));
    },
  };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

// Lets every write the writer starts settle, releasing each as `ok` says; done once no write
// has come for a few timer turns (a writer gathers lines for one).
async function releaseAll(out: ReturnType<typeof stalledOutput>, ok = true) {
  for (let idle = 0; idle < 3; idle++) {
    await tick();
    if (out.waiting.length > 0) idle = -1;
    while (out.waiting.length > 0) out.release(ok);
  }
}

type Writer = ReturnType<typeof createLogWriter>;

// A writer that waits one timer turn for lines to gather, not 50 ms.
const writerOn = (
  out: ReturnType<typeof stalledOutput>,
  format: "json" | "text" = "json",
  maxWaiting?: number,
) => createLogWriter(out, format, { maxWaiting, delayMs: 0 });

// Writes `lines`, then lets their writes, and any before them, succeed or fail.
async function writeLines(
  log: Writer,
  out: ReturnType<typeof stalledOutput>,
  lines: string[],
  ok = true,
) {
  for (const line of lines) log.write(line);
  await releaseAll(out, ok);
}

Deno.test("createLogWriter: lines gather into one write, one write at a time, in order", async () => {
  const out = stalledOutput();
  const log = writerOn(out);
  log.write("one");
  log.write("two");
  await tick();
  log.write("three");
  log.write("four");
  await tick();
  assert.equal(out.waiting.length, 1, "one write at a time");
  await releaseAll(out);
  assert.deepEqual(out.written, ["one\ntwo\n", "three\nfour\n"]);
  assert.equal(await log.flush(1_000), 0);
});

Deno.test("createLogWriter: lines wait for the delay, or for a flush, which writes at once", async () => {
  const out = stalledOutput();
  const log = createLogWriter(out, "json", { delayMs: 60_000 });
  log.write("one");
  await tick();
  assert.equal(out.waiting.length, 0, "still gathering");
  const flushed = log.flush(1_000);
  await tick();
  out.release();
  assert.equal(await flushed, 0);
  assert.deepEqual(out.written, ["one\n"]);
});

Deno.test("request log: an output that never takes a write never holds up a handler", async () => {
  let writes = 0;
  const log = createLogWriter({ write: () => (writes++, new Promise(() => {})) }, "json", {
    maxWaiting: 2_000,
  });
  const { fetch } = await fixtureApp({ logLine: log.write });
  for (let i = 0; i < 200; i++) assert.equal((await fetch("/healthz")).status, 200);
  assert.equal(writes, 1, "the second write waits for the first");
  assert.equal(await log.flush(10), 200, "flush gives up at its timeout; every line unwritten");
});

Deno.test("request log: past the bound a stalled stdout's lines are dropped, and the count is said once", async () => {
  const out = stalledOutput();
  const log = writerOn(out, "json", 2_000);
  const app = await fixtureApp({ logLine: log.write });
  for (let i = 0; i < 100; i++) assert.equal((await app.fetch("/healthz")).status, 200);
  await releaseAll(out);
  // Once stdout keeps up again, the lines after the notice are all written.
  for (let i = 0; i < 20; i++) {
    assert.equal((await app.fetch("/healthz")).status, 200);
    await releaseAll(out);
  }
  const lines = out.written.join("").trimEnd().split("\n").map((line) => JSON.parse(line));
  const notices = lines.filter((line) => "dropped" in line);
  assert.equal(notices.length, 1, "said once");
  const [notice] = notices;
  assert.equal(notice.reason, "stdout did not keep up, or failed");
  assert.match(notice.time, /^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
  const logged = lines.filter((line) => line.path === "/healthz").length;
  // About 2,000 bytes of lines of about 160 wait: the first in its write, a dozen queued.
  assert.ok(notice.dropped >= 80 && logged <= 40, `${notice.dropped} dropped, ${logged} logged`);
  assert.equal(notice.dropped + logged, 120, "every request is logged or counted");
  assert.equal(await log.flush(1_000), 0);
});

Deno.test("createLogWriter: a write that fails is counted as dropped, and said in text too", async () => {
  const out = stalledOutput();
  const log = writerOn(out, "text");
  await writeLines(log, out, ["one", "two"], false);
  await writeLines(log, out, ["three"]);
  assert.match(
    out.written.join(""),
    /^\d{4}-\d\d-\d\dT[\d:.]+Z log 2 lines dropped: stdout did not keep up, or failed\nthree\n$/,
  );
});

Deno.test("createLogWriter: the count survives a failed write that carried it, and is said once", async () => {
  const out = stalledOutput();
  const log = writerOn(out, "text");
  for (let round = 0; round < 5; round++) {
    await writeLines(log, out, Array.from({ length: 10 }, (_, i) => `r${round}-${i}`), false);
  }
  await writeLines(log, out, ["after"]);
  assert.match(out.written.join(""), / log 50 lines dropped: .*\nafter\n$/);
  await writeLines(log, out, ["lost"], false);
  await writeLines(log, out, ["last"]);
  assert.match(out.written.at(-1)!, / log 1 lines dropped: .*\nlast\n$/);
});

Deno.test("createLogWriter: a failed write's bytes are released, so later lines are written", async () => {
  const out = stalledOutput();
  const log = writerOn(out, "json", 10);
  await writeLines(log, out, ["fails once"], false);
  for (let i = 0; i < 3; i++) await writeLines(log, out, [`ok ${i}`]);
  assert.equal(out.written.filter((text) => text.includes("ok ")).length, 3);
});

Deno.test("createLogWriter: a write cut short leaves no half line for the next one to join", async () => {
  const out = stalledOutput();
  const log = writerOn(out);
  log.write('{"a":1}');
  await tick();
  out.release(true, 4);
  await tick();
  out.release(false);
  await tick();
  // The next write fails before writing anything: the half line is still there to end.
  await writeLines(log, out, ['{"lost":true}'], false);
  await writeLines(log, out, ['{"b":2}']);
  const [torn, notice, next] = out.written.join("").trimEnd().split("\n");
  assert.equal(torn, '{"a"', "the half line written before the failure ends there");
  assert.equal(JSON.parse(notice).dropped, 2);
  assert.deepEqual(JSON.parse(next), { b: 2 });
});

Deno.test("createLogWriter: one line larger than the bound is written when nothing else waits", async () => {
  const out = stalledOutput();
  const log = writerOn(out, "json", 8);
  log.write("a line longer than eight bytes");
  log.write("and the next waits its turn? no: dropped");
  await releaseAll(out);
  await writeLines(log, out, ["end"]);
  const written = out.written.join("").trimEnd().split("\n");
  assert.equal(written[0], "a line longer than eight bytes");
  assert.equal(JSON.parse(written[1]).dropped, 1);
  assert.equal(written[2], "end");
});

Deno.test("createLogWriter: flush gives up at its timeout and says how many lines are missing", async () => {
  const out = stalledOutput();
  const log = writerOn(out);
  await writeLines(log, out, ["one"], false);
  log.write("two");
  log.write("three");
  // One line failed and is not said yet; two wait on an output that has not taken them.
  assert.equal(await log.flush(20), 3);
  await releaseAll(out);
  assert.equal(await log.flush(20), 0, "written, and the loss said in the log");
  assert.match(out.written.join(""), /"dropped":1,.*\ntwo\nthree\n$/);
});
