import assert from "node:assert/strict";
import {
  findHeaderEnd,
  MAX_HEADER_BYTES,
  parseEnvelopeHeader,
} from "../../../server/tunnel/envelope.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const DSN = "https://key@o1.ingest.sentry.io/42";

function reasonFor(line: Uint8Array): string {
  const result = parseEnvelopeHeader(line);
  if (result.ok) throw new Error("expected a rejection");
  assert.doesNotMatch(result.reason, /\n/);
  return result.reason;
}

Deno.test("parseEnvelopeHeader returns the DSN of a real header", () => {
  const line = encode(JSON.stringify({
    event_id: "9ec79c33ec9942ab8353589fcb2e04dc",
    dsn: DSN,
    sent_at: "2026-01-01T00:00:00.000Z",
    sdk: { name: "sentry.javascript.react", version: "10.75.2" },
  }));
  const result = parseEnvelopeHeader(line);
  assert.equal(result.ok, true);
  assert.equal(result.ok && result.dsn.projectId, "42");
  assert.equal(result.ok && result.dsn.publicKey, "key");
});

Deno.test("parseEnvelopeHeader tolerates a CR before the newline and non-ASCII text", () => {
  assert.equal(parseEnvelopeHeader(encode(`{"dsn":"${DSN}","x":"żółw 🐢"}\r`)).ok, true);
});

Deno.test("parseEnvelopeHeader rejects each malformed header with its own reason", () => {
  const cases: [string, Uint8Array, RegExp][] = [
    ["empty", encode(""), /not JSON/],
    ["not JSON", encode("{dsn: nope}"), /not JSON/],
    ["truncated JSON", encode(`{"dsn":"${DSN}"`), /not JSON/],
    ["array", encode(`["${DSN}"]`), /not a JSON object/],
    ["string", encode(JSON.stringify(DSN)), /not a JSON object/],
    ["null", encode("null"), /not a JSON object/],
    ["number", encode("42"), /not a JSON object/],
    ["no dsn", encode(`{"event_id":"abc"}`), /no dsn/],
    ["dsn number", encode(`{"dsn":42}`), /not a string/],
    ["dsn null", encode(`{"dsn":null}`), /not a string/],
    ["dsn object", encode(`{"dsn":{"host":"x"}}`), /not a string/],
    ["dsn invalid", encode(`{"dsn":"https://o1.ingest.sentry.io/42"}`), /not a valid DSN/],
    ["dsn other scheme", encode(`{"dsn":"ftp://k@h:21/1"}`), /not a valid DSN/],
    ["invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), /UTF-8/],
    ["lone surrogate", new Uint8Array([0x22, 0xed, 0xa0, 0x80, 0x22]), /UTF-8/],
    ["too long", encode(`{"dsn":"${DSN}","pad":"${"x".repeat(MAX_HEADER_BYTES)}"}`), /long/],
  ];
  for (const [name, line, reason] of cases) assert.match(reasonFor(line), reason, name);
});

Deno.test("parseEnvelopeHeader does not fall for a dsn on the prototype", () => {
  assert.match(reasonFor(encode(`{"__proto__":{"dsn":"${DSN}"}}`)), /no dsn/);
});

Deno.test("findHeaderEnd finds the newline across chunks", () => {
  const first = encode('{"dsn":');
  const second = encode('"x"}\nrest');
  assert.deepEqual(findHeaderEnd(first, 0), { kind: "more" });
  assert.deepEqual(findHeaderEnd(second, first.length), {
    kind: "found",
    offset: first.length + 4,
  });
});

Deno.test("findHeaderEnd allows a line of exactly the cap and no more", () => {
  const atCap = new Uint8Array(MAX_HEADER_BYTES + 1).fill(0x61);
  atCap[MAX_HEADER_BYTES] = 0x0a;
  assert.deepEqual(findHeaderEnd(atCap, 0), { kind: "found", offset: MAX_HEADER_BYTES });
  const overCap = new Uint8Array(MAX_HEADER_BYTES + 2).fill(0x61);
  overCap[MAX_HEADER_BYTES + 1] = 0x0a;
  assert.deepEqual(findHeaderEnd(overCap, 0), { kind: "too-long" });
  // The same limits when the line arrives one byte at a time.
  assert.deepEqual(findHeaderEnd(encode("\n"), MAX_HEADER_BYTES), {
    kind: "found",
    offset: MAX_HEADER_BYTES,
  });
  assert.deepEqual(findHeaderEnd(encode("a"), MAX_HEADER_BYTES), { kind: "too-long" });
  assert.deepEqual(findHeaderEnd(encode("\n"), MAX_HEADER_BYTES + 1), { kind: "too-long" });
  assert.deepEqual(findHeaderEnd(encode("a"), MAX_HEADER_BYTES - 1), { kind: "more" });
});

Deno.test("findHeaderEnd honours a smaller cap", () => {
  assert.deepEqual(findHeaderEnd(encode("abcdef\n"), 0, 4), { kind: "too-long" });
  assert.deepEqual(findHeaderEnd(encode("abcd\n"), 0, 4), { kind: "found", offset: 4 });
});
