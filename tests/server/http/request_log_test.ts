import assert from "node:assert/strict";
import {
  clockOrigin,
  formatRecord,
  LineWriter,
  type LogFormat,
  logTime,
  requestIdFor,
  writeOut,
} from "../../../server/http/request_log.ts";

const TIME = "2026-11-22T06:00:00.000Z";
const record = {
  answeredAt: Date.parse(TIME),
  method: "GET",
  path: "/a b",
  status: 200,
  durationMs: 1.5,
  bytes: 42,
  requestId: "r-1",
};

// The record as its JSON line reads: the time in ISO 8601, in the first field.
// (Formatted with a time origin of 0, so `answeredAt` stands for the wall-clock time.)
function asLogged({ answeredAt, ...rest }: typeof record) {
  return { time: new Date(answeredAt).toISOString(), ...rest };
}

Deno.test("formatRecord: one JSON line, or one text line", () => {
  const json = formatRecord(record, "json", 0);
  assert.deepEqual(JSON.parse(json), asLogged(record));
  assert.ok(!json.includes("\n"));
  assert.equal(
    formatRecord({ ...record, bytes: null }, "text", 0),
    `${TIME} GET "/a b" 200 1.5ms -B r-1`,
  );
  const hostile = formatRecord({ ...record, path: "/x\ny" }, "text", 0);
  assert.ok(!hostile.includes("\n"), "a path cannot forge a second line");
});

Deno.test("formatRecord: any path, method or id round-trips through JSON, on one line", () => {
  const samples = ["/", '/"q"', "/back\\slash", "/tab\t", "/\u0000", "/é", "/\u2028", "/\ud800"];
  for (let i = 0; i < 2000; i++) {
    const chars = Array.from({ length: i % 12 }, () => String.fromCharCode(Math.random() * 0x2100));
    samples.push("/" + chars.join(""));
  }
  for (const text of samples) {
    const line = formatRecord({ ...record, method: text, path: text, requestId: text }, "json", 0);
    assert.ok(!line.includes("\n") && !line.includes("\r"), JSON.stringify(text));
    const parsed = JSON.parse(line);
    assert.deepEqual([parsed.method, parsed.path, parsed.requestId], [text, text, text]);
    assert.equal(
      line,
      JSON.stringify(asLogged({ ...record, method: text, path: text, requestId: text })),
    );
  }
});

Deno.test("requestIdFor: keeps a sane incoming id, replaces anything else", () => {
  const withId = (id: string) =>
    requestIdFor(new Request("http://x/", { headers: { "x-request-id": id } }));
  assert.equal(withId("abc-123"), "abc-123");
  assert.match(withId("bad id\twith spaces"), /^[0-9a-f-]{36}$/);
  assert.match(withId("x".repeat(200)), /^[0-9a-f-]{36}$/);
  assert.match(requestIdFor(new Request("http://x/")), /^[0-9a-f-]{36}$/);
});

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

Deno.test("formatRecord: the time is the record's clock reading plus the time origin", () => {
  const line = formatRecord({ ...record, answeredAt: 1_500.7 }, "json", Date.parse(TIME) - 1_000);
  assert.equal(JSON.parse(line).time, "2026-11-22T06:00:00.500Z");
});

Deno.test("clockOrigin: a performance.now() reading plus the origin is the wall-clock time", () => {
  const before = Date.now();
  const wall = clockOrigin() + performance.now();
  const after = Date.now();
  assert.ok(wall >= before - 1 && wall <= after + 1, `${before} <= ${wall} <= ${after}`);
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

Deno.test("logTime: the ISO time of the millisecond given, reused within it", () => {
  for (const ms of [0, 1_700_000_000_123, 1_700_000_000_123, 1_700_000_000_124, 0]) {
    assert.equal(logTime(ms), new Date(ms).toISOString());
  }
  assert.match(logTime(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

Deno.test("writeOut: writes synchronously; what a synchronous write refuses goes asynchronously", async () => {
  const bytes = new TextEncoder().encode("0123456789");
  const took: string[] = [];
  const text = (part: Uint8Array) => new TextDecoder().decode(part);
  // Takes 3 bytes at a time, then refuses (as a full non-blocking pipe would).
  let syncCalls = 0;
  const output = {
    writeSync(part: Uint8Array) {
      if (++syncCalls > 2) throw new Error("would block");
      took.push(`sync ${text(part.subarray(0, 3))}`);
      return Math.min(3, part.length);
    },
    write(part: Uint8Array) {
      took.push(`async ${text(part.subarray(0, 2))}`);
      return Promise.resolve(Math.min(2, part.length));
    },
  };
  await writeOut(output, bytes);
  assert.deepEqual(took, ["sync 012", "sync 345", "async 67", "async 89"]);

  took.length = 0;
  syncCalls = -10;
  const pending = writeOut(output, bytes);
  assert.deepEqual(took, ["sync 012", "sync 345", "sync 678", "sync 9"], "written before return");
  await pending;
});
