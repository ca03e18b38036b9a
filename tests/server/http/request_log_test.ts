import assert from "node:assert/strict";
import { formatRecord, logTime, requestIdFor } from "../../../server/http/request_log.ts";
import { record, TIME } from "../../fixtures/request_record.ts";

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
  for (const field of ["path", "method", "requestId"]) {
    const hostile = formatRecord({ ...record, [field]: "/x\ny\r" }, "text", 0);
    assert.ok(!/[\n\r]/.test(hostile), `the ${field} cannot forge a second line`);
  }
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

Deno.test("formatRecord: the time is the record's clock reading plus the time origin", () => {
  const line = formatRecord({ ...record, answeredAt: 1_500.7 }, "json", Date.parse(TIME) - 1_000);
  assert.equal(JSON.parse(line).time, "2026-11-22T06:00:00.500Z");
});

Deno.test("logTime: the ISO time of the millisecond given, reused within it", () => {
  for (const ms of [0, 1_700_000_000_123, 1_700_000_000_123, 1_700_000_000_124, 0]) {
    assert.equal(logTime(ms), new Date(ms).toISOString());
  }
});
