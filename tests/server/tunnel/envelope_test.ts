import assert from "node:assert/strict";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import {
  itemTypes,
  MAX_HEADER_BYTES,
  MAX_ITEMS,
  parseEnvelopeHeader,
  readHead,
} from "../../../server/tunnel/envelope.ts";
import type { Encoding } from "../../../server/tunnel/policy.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const DSN = "https://key@o1.ingest.sentry.io/42";
const MiB = 1024 * 1024;

function reasonFor(line: Uint8Array): string {
  const result = parseEnvelopeHeader(line);
  if (typeof result !== "string") throw new Error("expected a rejection");
  assert.doesNotMatch(result, /\n/);
  return result;
}

Deno.test("parseEnvelopeHeader returns the DSN of a real header", () => {
  const line = encode(JSON.stringify({
    event_id: "9ec79c33ec9942ab8353589fcb2e04dc",
    dsn: DSN,
    sent_at: "2026-01-01T00:00:00.000Z",
    sdk: { name: "sentry.javascript.react", version: "10.75.2" },
  }));
  const dsn = parseEnvelopeHeader(line);
  assert.equal(typeof dsn !== "string" && dsn.projectId, "42");
  assert.equal(typeof dsn !== "string" && dsn.publicKey, "key");
});

Deno.test("parseEnvelopeHeader tolerates a CR before the newline and non-ASCII text", () => {
  assert.notEqual(typeof parseEnvelopeHeader(encode(`{"dsn":"${DSN}","x":"żółw 🐢"}\r`)), "string");
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

/** Read the head of `body` sent in chunks of `size`; also how many body bytes it asked for. */
async function head(body: Uint8Array, size: number, encoding: Encoding | null = null) {
  let offset = 0;
  const next = () => {
    if (offset >= body.byteLength) return Promise.resolve(undefined);
    offset += size;
    return Promise.resolve(body.slice(offset - size, offset));
  };
  const result = await readHead(next, encoding);
  const line = "line" in result ? new TextDecoder().decode(result.line) : undefined;
  return { line, result, read: Math.min(offset, body.byteLength) };
}

Deno.test("readHead finds the line however the body is cut, and keeps every byte read", async () => {
  const header = `{"dsn":"${DSN}"}`;
  const body = encode(`${header}\n{"type":"event"}\n{}`);
  for (const size of [1, 5, header.length, header.length + 1, body.byteLength]) {
    const { line, result, read } = await head(body, size);
    assert.equal(line, header, String(size));
    // Reading stops at the chunk that completes the line; those raw bytes are all kept.
    assert.ok("raw" in result && result.raw.length === read && read <= header.length + size);
    assert.deepEqual(result.raw.bytes(), body.subarray(0, read));
  }
});

Deno.test("readHead allows a line of exactly the cap and no more, and needs a newline", async () => {
  const atCap = new Uint8Array(MAX_HEADER_BYTES + 1).fill(0x61);
  atCap[MAX_HEADER_BYTES] = 0x0a;
  for (const size of [1000, MAX_HEADER_BYTES + 1]) {
    assert.equal((await head(atCap, size)).line?.length, MAX_HEADER_BYTES);
  }
  const overCap = new Uint8Array(MAX_HEADER_BYTES + 2).fill(0x61);
  overCap[MAX_HEADER_BYTES + 1] = 0x0a;
  const tooLong = await head(overCap, 1000);
  assert.match("reason" in tooLong.result ? tooLong.result.reason : "", /too long or missing/);
  // Given up at the cap, not read to the end.
  assert.ok(tooLong.read <= MAX_HEADER_BYTES + 1000);
  const noLine = await head(encode(`{"dsn":"${DSN}"}`), 3);
  assert.equal("reason" in noLine.result && noLine.result.status, 400);
});

const compress: Record<Encoding, (bytes: Uint8Array) => Uint8Array> = {
  gzip: (bytes) => new Uint8Array(gzipSync(bytes)),
  deflate: (bytes) => new Uint8Array(deflateSync(bytes)),
  br: (bytes) => new Uint8Array(brotliCompressSync(bytes)),
};
const ENCODINGS = Object.keys(compress) as Encoding[];

// A header line that does not compress (random hex), so the line is only whole near the end
// of the compressed body: the worst case for a decoder that re-read its input.
function longHeader(padBytes: number): { header: string; body: Uint8Array } {
  const pad = Array.from(crypto.getRandomValues(new Uint8Array(padBytes / 2)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const header = JSON.stringify({ dsn: DSN, pad });
  return { header, body: encode(`${header}\n{"type":"event"}\n{}`) };
}

Deno.test("readHead decodes gzip, deflate and br lines in any chunking, 1-byte chunks included", async () => {
  const { header, body } = longHeader(40_000);
  for (const encoding of ENCODINGS) {
    const compressed = compress[encoding](body);
    for (const size of [1, 7, 4096, compressed.byteLength]) {
      const { line, result, read } = await head(compressed, size, encoding);
      assert.equal(line, header, `${encoding} ${size}`);
      // The raw (compressed) bytes read are kept to be forwarded unchanged.
      assert.ok("raw" in result);
      assert.deepEqual(result.raw.bytes(), compressed.subarray(0, read));
    }
  }
});

Deno.test("readHead: gzip bodies of several members decode as one", async () => {
  const parts = [`{"dsn":"https://k@o1.ingest`, `.sentry.io/1"}\n{"type":"event"}\n{}`];
  const members = parts.map((part) => compress.gzip(encode(part)));
  const body = new Uint8Array([...members[0], ...members[1]]);
  for (const size of [1, body.byteLength]) {
    assert.equal(
      (await head(body, size, "gzip")).line,
      `{"dsn":"https://k@o1.ingest.sentry.io/1"}`,
    );
  }
});

Deno.test("readHead: a decompression bomb is given up soon after the cap, not read on", async () => {
  for (const encoding of ENCODINGS) {
    const bomb = compress[encoding](new Uint8Array(32 * MiB).fill(0x61));
    const { result, read } = await head(bomb, 64, encoding);
    assert.match("reason" in result ? result.reason : "", /too long or missing/, encoding);
    // 64 KiB of output is at most ~64 bytes of gzip input per KiB: far less than the bomb.
    assert.ok(read < Math.max(bomb.byteLength / 2, 1024), `${encoding}: read ${read}`);
  }
});

Deno.test("readHead: no line, corrupt and truncated compressed bodies are refused, not thrown", async () => {
  for (const encoding of ENCODINGS) {
    const noLine = compress[encoding](encode("x".repeat(70_000)));
    assert.equal((await head(noLine, 1000, encoding)).line, undefined, encoding);
    const short = compress[encoding](encode('{"dsn":"x"}'));
    assert.equal((await head(short, 1000, encoding)).line, undefined, encoding);
    const notEncoded = encode('{"dsn":"x"}\n{}\n'.repeat(50));
    const corrupt = await head(notEncoded, 10, encoding);
    assert.equal(corrupt.line, undefined, encoding);
    const whole = compress[encoding](longHeader(5000).body);
    const truncated = whole.subarray(0, whole.byteLength / 2);
    assert.equal((await head(truncated, 5, encoding)).line, undefined, encoding);
  }
  const garbage = await head(encode("not gzip at all\n"), 100, "gzip");
  assert.match("reason" in garbage.result ? garbage.result.reason : "", /decompress/);
});

Deno.test("itemTypes: each item's type, payloads skipped by length or by line, as far as headers read", () => {
  const text = new TextEncoder();
  const bytes = (s: string) => text.encode(s);
  assert.deepEqual(
    itemTypes(
      bytes(
        '{"dsn":"x"}\n{"type":"event","length":7}\n{"a":1}\n{"type":"attachment"}\nab\n{"type":"transaction","length":3}\n\n\n\n',
      ),
    ),
    ["event", "attachment", "transaction"],
  );
  // A length that covers a newline is honoured: the payload holds "x\n{".
  assert.deepEqual(itemTypes(bytes('{}\n{"type":"log","length":3}\nx\n{{"type":"span"}\n{}')), [
    "log",
    "span",
  ]);
  assert.deepEqual(itemTypes(bytes('{}\nnot json\n{"type":"event"}\n{}')), []);
  assert.deepEqual(itemTypes(bytes('{}\n{"type":7}\n{}')), []);
  assert.deepEqual(
    itemTypes(bytes('{}\n{"type":"event"}')),
    [],
    "a header without its payload line",
  );
  assert.deepEqual(itemTypes(bytes("{}")), []);
  const many = "{}\n" + '{"type":"attachment","length":0}\n\n'.repeat(500);
  assert.equal(itemTypes(bytes(many)).length, MAX_ITEMS);
});
