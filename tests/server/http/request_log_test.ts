import assert from "node:assert/strict";
import {
  formatRecord,
  LineWriter,
  logTime,
  requestIdFor,
} from "../../../server/http/request_log.ts";

const TIME = "2026-11-22T06:00:00.000Z";
const record = {
  timeMs: Date.parse(TIME),
  method: "GET",
  path: "/a b",
  status: 200,
  durationMs: 1.5,
  bytes: 42,
  requestId: "r-1",
};

// The record as its JSON line reads: the time in ISO 8601, in the first field.
function asLogged({ timeMs, ...rest }: typeof record) {
  return { time: new Date(timeMs).toISOString(), ...rest };
}

Deno.test("formatRecord: one JSON line, or one text line", () => {
  const json = formatRecord(record, "json");
  assert.deepEqual(JSON.parse(json), asLogged(record));
  assert.ok(!json.includes("\n"));
  assert.equal(
    formatRecord({ ...record, bytes: null }, "text"),
    `${TIME} GET "/a b" 200 1.5ms -B r-1`,
  );
  const hostile = formatRecord({ ...record, path: "/x\ny" }, "text");
  assert.ok(!hostile.includes("\n"), "a path cannot forge a second line");
});

Deno.test("formatRecord: any path, method or id round-trips through JSON, on one line", () => {
  const samples = ["/", '/"q"', "/back\\slash", "/tab\t", "/\u0000", "/é", "/\u2028", "/\ud800"];
  for (let i = 0; i < 2000; i++) {
    const chars = Array.from({ length: i % 12 }, () => String.fromCharCode(Math.random() * 0x2100));
    samples.push("/" + chars.join(""));
  }
  for (const text of samples) {
    const line = formatRecord({ ...record, method: text, path: text, requestId: text }, "json");
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
function collectingWriter(): { writer: LineWriter; written: string[] } {
  const written: string[] = [];
  const writer = new LineWriter((bytes) => {
    written.push(new TextDecoder().decode(bytes));
    return Promise.resolve();
  }, 10_000);
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

Deno.test("LineWriter: formatters run with their batch, in order; one that throws loses its line", async () => {
  const { writer, written } = collectingWriter();
  const calls: string[] = [];
  writer.write("a");
  writer.write(() => (calls.push("b"), "b"));
  writer.write(() => {
    throw new Error("bad line");
  });
  writer.write(() => (calls.push("c"), "c"));
  assert.deepEqual(calls, [], "nothing is formatted before the batch is written");
  const errors = console.error;
  console.error = () => {};
  try {
    await writer.flush();
  } finally {
    console.error = errors;
  }
  assert.deepEqual(calls, ["b", "c"]);
  assert.deepEqual(written, ["a\nb\nc\n"]);
});

Deno.test("logTime: the ISO time of the millisecond given, reused within it", () => {
  for (const ms of [0, 1_700_000_000_123, 1_700_000_000_123, 1_700_000_000_124, 0]) {
    assert.equal(logTime(ms), new Date(ms).toISOString());
  }
  assert.match(logTime(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});
