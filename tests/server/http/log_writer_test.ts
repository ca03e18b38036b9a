import assert from "node:assert/strict";
import { LineWriter, PartialWrite } from "../../../server/http/log_writer.ts";
import { formatRecord, type LogFormat } from "../../../server/http/request_log.ts";
import { record, TIME } from "../../fixtures/request_record.ts";

// A writer whose batches are kept as text; the delay is long, so only flush or a full batch writes.
function collectingWriter(format?: LogFormat): { writer: LineWriter; written: string[] } {
  const written: string[] = [];
  const writer = new LineWriter({
    sink: (bytes) => {
      written.push(new TextDecoder().decode(bytes));
      return Promise.resolve();
    },
    delayMs: 10_000,
    format,
    timeOrigin: () => 0,
  });
  return { writer, written };
}

Deno.test("LineWriter: batches lines and writes them all on flush", async () => {
  const { writer, written } = collectingWriter();
  writer.write("one");
  writer.write("two");
  assert.deepEqual(written, []);
  await writer.flush();
  assert.deepEqual(written, ["one\ntwo\n"]);
  for (let i = 0; i < 256; i++) writer.write(String(i));
  await writer.flush();
  assert.equal(written.length, 2, "a full batch is written at once");
  assert.equal(String(written.at(1)).split("\n").length, 257);
});

Deno.test("LineWriter: records are formatted in its format, in order with the lines", async () => {
  for (const format of ["json", "text"] as const) {
    const { writer, written } = collectingWriter(format);
    writer.write("a");
    writer.write(record);
    writer.write("b");
    writer.write({ ...record, path: "/second" });
    await writer.flush();
    const expected = ["a", formatRecord(record, format, 0), "b"];
    expected.push(formatRecord({ ...record, path: "/second" }, format, 0));
    assert.deepEqual(written, [expected.join("\n") + "\n"]);
  }
});

Deno.test("LineWriter: a record that cannot be formatted loses its line, not the batch", async () => {
  const { writer, written } = collectingWriter();
  const logged: unknown[][] = [];
  writer.write(record);
  writer.write({ ...record, answeredAt: NaN });
  writer.write("after");
  const errors = console.error;
  console.error = (...args: unknown[]) => logged.push(args);
  try {
    await writer.flush();
  } finally {
    console.error = errors;
  }
  assert.deepEqual(written, [`${formatRecord(record, "json", 0)}\nafter\n`]);
  assert.equal(logged.length, 1);
  assert.match(String(logged[0][0]), /could not be formatted/);
});

Deno.test("LineWriter: measures the time origin once per batch", async () => {
  const origins = [0, 60_000];
  const written: string[] = [];
  const writer = new LineWriter({
    sink: (bytes) => (written.push(new TextDecoder().decode(bytes)), Promise.resolve()),
    delayMs: 10_000,
    timeOrigin: () => origins.shift()!,
  });
  writer.write(record);
  writer.write(record);
  await writer.flush();
  writer.write(record);
  await writer.flush();
  const times = written.join("").trim().split("\n").map((line) => JSON.parse(line).time);
  assert.deepEqual(times, [TIME, TIME, "2026-11-22T06:01:00.000Z"]);
});

// A sink that takes a write only when told to: a stdout that has stopped keeping up.
function stalledSink() {
  const waiting: { text: string; done: () => void; fail: (e: Error) => void }[] = [];
  const written: string[] = [];
  return {
    written,
    waiting,
    sink: (bytes: Uint8Array) =>
      new Promise<void>((done, fail) =>
        waiting.push({ text: new TextDecoder().decode(bytes), done, fail })
      ),
    /** Let the oldest waiting write finish, or fail after `partly` of its characters. */
    release(ok = true, partly = 0) {
      const next = waiting.shift()!;
      if (ok) written.push(next.text);
      else if (partly > 0) written.push(next.text.slice(0, partly));
      ok
        ? next.done()
        : next.fail(partly > 0 ? new PartialWrite(partly) : new Error("broken pipe"));
    },
  };
}

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`);
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

Deno.test("LineWriter: a stalled stdout holds a bounded number of bytes; the rest is counted and said", async () => {
  const out = stalledSink();
  // Each batch is 4 lines of 9 bytes: two batches fill the 72 bytes allowed, the next are dropped.
  const writer = new LineWriter({
    sink: out.sink,
    delayMs: 10_000,
    maxPendingBytes: 72,
    timeOrigin: () => 0,
  });
  const batch = (tag: string) => {
    for (const line of lines(4, tag)) writer.write(line.padEnd(8, "."));
    writer.flush();
  };
  batch("a");
  batch("b");
  batch("c");
  batch("d");
  await tick();
  assert.equal(out.waiting.length, 1, "one write at a time");
  while (out.waiting.length > 0) {
    out.release();
    await tick();
  }
  batch("e");
  await tick();
  out.release();
  assert.equal(await writer.flush(), true);
  const written = out.written.join("").trim().split("\n");
  const padded = (tag: string) => lines(4, tag).map((line) => line.padEnd(8, "."));
  assert.deepEqual(written.slice(0, 8), [...padded("a"), ...padded("b")]);
  const notice = JSON.parse(written[8]);
  assert.deepEqual(
    [notice.dropped, notice.reason],
    [8, "stdout did not keep up, or failed"],
    "c and d",
  );
  assert.match(notice.time, /^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
  assert.deepEqual(written.slice(9), padded("e"));
});

Deno.test("LineWriter: a batch that cannot be written is counted as dropped, in text too", async () => {
  const out = stalledSink();
  const writer = new LineWriter({ sink: out.sink, delayMs: 10_000, format: "text" });
  writer.write("one");
  writer.write("two");
  writer.flush();
  await tick();
  out.release(false);
  await tick();
  writer.write("three");
  const flushed = writer.flush();
  await tick();
  out.release();
  assert.equal(await flushed, true);
  assert.match(
    out.written.join(""),
    /^\d{4}-\d\d-\d\dT[\d:.]+Z log 2 lines dropped: stdout did not keep up, or failed\nthree\n$/,
  );
});

Deno.test("LineWriter: flush gives up after its timeout when stdout does not keep up", async () => {
  const out = stalledSink();
  const writer = new LineWriter({ sink: out.sink, delayMs: 10_000 });
  writer.write("stuck");
  assert.equal(await writer.flush(20), false);
  out.release();
  assert.equal(await writer.flush(20), true);
  assert.deepEqual(out.written, ["stuck\n"]);
});

// Lets every write the writer has started settle, releasing each as `ok` says.
async function releaseAll(out: ReturnType<typeof stalledSink>, ok = true) {
  await tick();
  while (out.waiting.length > 0) {
    out.release(ok);
    await tick();
  }
}

// Writes `entries` as one batch, then lets its write, and any before it, succeed or fail.
async function writeBatch(
  writer: LineWriter,
  out: ReturnType<typeof stalledSink>,
  entries: readonly string[],
  ok = true,
) {
  for (const entry of entries) writer.write(entry);
  writer.flush();
  await releaseAll(out, ok);
}

Deno.test("LineWriter: the count survives a failed write that carried it, and is said once", async () => {
  const out = stalledSink();
  const writer = new LineWriter({
    sink: out.sink,
    delayMs: 10_000,
    format: "text",
    timeOrigin: () => 0,
  });
  for (let round = 0; round < 5; round++) {
    await writeBatch(writer, out, lines(10, `r${round}-`), false);
  }
  await writeBatch(writer, out, ["after"]);
  assert.match(out.written.join(""), / log 50 lines dropped: .*\nafter\n$/);
  // Said once: the next drop starts counting from zero.
  await writeBatch(writer, out, ["lost"], false);
  await writeBatch(writer, out, ["last"]);
  assert.match(out.written.at(-1)!, / log 1 lines dropped: .*\nlast\n$/);
});

Deno.test("LineWriter: a failed write's bytes are released, so later batches are written", async () => {
  const out = stalledSink();
  const writer = new LineWriter({ sink: out.sink, delayMs: 10_000, maxPendingBytes: 10 });
  await writeBatch(writer, out, ["fails once"], false);
  for (let i = 0; i < 3; i++) await writeBatch(writer, out, [`ok ${i}`]);
  assert.equal(out.written.filter((text) => text.includes("ok ")).length, 3);
});

Deno.test("LineWriter: a write cut short leaves no half line for the next one to join", async () => {
  const out = stalledSink();
  const writer = new LineWriter({ sink: out.sink, delayMs: 10_000, timeOrigin: () => 0 });
  writer.write('{"a":1}');
  writer.flush();
  await tick();
  out.release(false, 4);
  await tick();
  // The next write fails before writing anything: the half line is still there to end.
  await writeBatch(writer, out, ['{"lost":true}'], false);
  await writeBatch(writer, out, ['{"b":2}']);
  const text = out.written.join("");
  const [torn, notice, next] = text.trimEnd().split("\n");
  assert.equal(torn, '{"a"', "the half line written before the failure ends there");
  assert.equal(JSON.parse(notice).dropped, 2);
  assert.deepEqual(JSON.parse(next), { b: 2 });
});

Deno.test("LineWriter: flush tells whether lines are missing, and how many", async () => {
  const out = stalledSink();
  const writer = new LineWriter({ sink: out.sink, delayMs: 10_000 });
  await writeBatch(writer, out, ["one"], false);
  writer.write("two");
  writer.write("three");
  assert.equal(await writer.flush(30), false);
  // One line failed and is not said to be yet; two still wait on a stdout that never took them.
  assert.equal(writer.unwritten, 3);
  await releaseAll(out);
  assert.equal(writer.unwritten, 0);
  assert.equal(await writer.flush(30), true, "written, and the loss said in the log");
  assert.match(out.written.join(""), /"dropped":1,.*\ntwo\nthree\n$/);
});

Deno.test("LineWriter: one batch larger than the limit is written when nothing else waits", async () => {
  const out = stalledSink();
  const writer = new LineWriter({ sink: out.sink, delayMs: 10_000, maxPendingBytes: 8 });
  writer.write("a line longer than eight bytes");
  writer.flush();
  writer.write("and the next waits its turn? no: dropped");
  writer.flush();
  await releaseAll(out);
  await writeBatch(writer, out, ["end"]);
  const written = out.written.join("").trimEnd().split("\n");
  assert.equal(written[0], "a line longer than eight bytes");
  assert.equal(JSON.parse(written[1]).dropped, 1);
  assert.equal(written[2], "end");
});
