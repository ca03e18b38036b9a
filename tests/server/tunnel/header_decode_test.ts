import assert from "node:assert/strict";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import {
  createHeaderLineDecoder,
  type HeadFormat,
  type LineOutcome,
} from "../../../server/tunnel/header_decode.ts";

const encoder = new TextEncoder();
const MiB = 1024 * 1024;
const CAP = 64 * 1024;

const compress: Record<HeadFormat, (bytes: Uint8Array) => Uint8Array> = {
  gzip: (bytes) => new Uint8Array(gzipSync(bytes)),
  deflate: (bytes) => new Uint8Array(deflateSync(bytes)),
  br: (bytes) => new Uint8Array(brotliCompressSync(bytes)),
};
const FORMATS = Object.keys(compress) as HeadFormat[];

/** Feed `body` in chunks of `size` bytes until the outcome is decided or the body ends. */
async function decode(format: HeadFormat, body: Uint8Array, size: number) {
  const decoder = await createHeaderLineDecoder(format, CAP);
  let outcome: LineOutcome = { kind: "more" };
  for (let i = 0; i < body.byteLength && outcome.kind === "more"; i += size) {
    outcome = await decoder.push(body.subarray(i, i + size));
  }
  if (outcome.kind === "more") outcome = await decoder.end();
  decoder.dispose();
  return { outcome, fed: decoder.fedBytes, produced: decoder.producedBytes };
}

function lineOf(outcome: LineOutcome): string {
  assert.equal(outcome.kind, "line", JSON.stringify(outcome));
  return new TextDecoder().decode((outcome as { line: Uint8Array }).line);
}

// A header line that does not compress (random hex), so the compressed body is long and the
// line is only complete near its end: the worst case for a decoder that re-reads its input.
function envelopeWithLongHeader(padBytes: number): { header: string; body: Uint8Array } {
  const pad = Array.from(crypto.getRandomValues(new Uint8Array(padBytes / 2)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
  const header = JSON.stringify({ dsn: "https://k@o1.ingest.sentry.io/1", pad });
  return { header, body: encoder.encode(`${header}\n{"type":"event"}\n{}`) };
}

Deno.test("decoder: 1-byte chunks feed each compressed byte once, for every encoding", async () => {
  const { header, body } = envelopeWithLongHeader(40_000);
  for (const format of FORMATS) {
    const compressed = compress[format](body);
    const { outcome, fed, produced } = await decode(format, compressed, 1);
    assert.equal(lineOf(outcome), header, format);
    // Linear work: the decoder saw at most the body once (2x is the bound the tunnel promises).
    assert.ok(fed <= compressed.byteLength, `${format}: fed ${fed} of ${compressed.byteLength}`);
    assert.ok(produced <= body.byteLength, `${format}: produced ${produced}`);
  }
});

Deno.test("decoder: any chunking finds the same line", async () => {
  const { header, body } = envelopeWithLongHeader(2_000);
  for (const format of FORMATS) {
    const compressed = compress[format](body);
    for (const size of [1, 7, 100, 4096, compressed.byteLength]) {
      assert.equal(lineOf((await decode(format, compressed, size)).outcome), header);
    }
  }
});

Deno.test("decoder: a bomb stops one step past the cap, however far it would expand", async () => {
  for (const format of FORMATS) {
    const bomb = compress[format](new Uint8Array(32 * MiB).fill(0x61));
    const { outcome, produced } = await decode(format, bomb, 64 * 1024);
    assert.equal(outcome.kind, "missing", format);
    assert.ok(produced <= CAP + 2 * 16 * 1024, `${format}: produced ${produced}`);
  }
});

Deno.test("decoder: gzip bodies of several members decode as one", async () => {
  const parts = ['{"dsn":"https://k@o1.ingest', '.sentry.io/1"}\n{"type":"event"}\n{}'];
  const members = parts.map((part) => compress.gzip(encoder.encode(part)));
  const body = new Uint8Array(members[0].byteLength + members[1].byteLength);
  body.set(members[0]);
  body.set(members[1], members[0].byteLength);
  for (const size of [1, body.byteLength]) {
    assert.equal(
      lineOf((await decode("gzip", body, size)).outcome),
      '{"dsn":"https://k@o1.ingest.sentry.io/1"}',
    );
  }
});

Deno.test("decoder: no line, corrupt and truncated bodies are refused, not thrown", async () => {
  for (const format of FORMATS) {
    const noLine = compress[format](encoder.encode("x".repeat(70_000)));
    assert.equal((await decode(format, noLine, 1000)).outcome.kind, "missing", format);
    const short = compress[format](encoder.encode('{"dsn":"x"}'));
    assert.equal((await decode(format, short, 1000)).outcome.kind, "missing", format);
    const notEncoded = encoder.encode('{"dsn":"x"}\n{}\n'.repeat(50));
    assert.notEqual((await decode(format, notEncoded, 10)).outcome.kind, "line", format);
    const whole = compress[format](envelopeWithLongHeader(5000).body);
    const truncated = whole.subarray(0, whole.byteLength / 2);
    assert.notEqual((await decode(format, truncated, 5)).outcome.kind, "line", format);
  }
});

Deno.test("decoder: dispose stops it; later pushes answer at once", async () => {
  const decoder = await createHeaderLineDecoder("gzip", CAP);
  decoder.dispose();
  decoder.dispose();
  assert.equal((await decoder.push(new Uint8Array([1, 2, 3]))).kind, "missing");
  assert.equal((await decoder.end()).kind, "missing");
  assert.equal(decoder.fedBytes, 0);
});
