import assert from "node:assert/strict";
import { brotliCompressSync } from "node:zlib";
import { brotliHeaderLine } from "../server/brotli_head.ts";

const encoder = new TextEncoder();
const br = (text: string | Uint8Array) =>
  new Uint8Array(brotliCompressSync(typeof text === "string" ? encoder.encode(text) : text));

Deno.test("brotliHeaderLine: the first line of a whole or partial body", () => {
  const body = br(`{"dsn":"https://k@h/1"}\n${"x".repeat(200_000)}`);
  const whole = brotliHeaderLine(body, 65_536);
  assert.ok(typeof whole === "object");
  assert.equal(new TextDecoder().decode(whole.line), '{"dsn":"https://k@h/1"}');
  assert.equal(brotliHeaderLine(body.subarray(0, 2), 65_536), "more");
  assert.equal(brotliHeaderLine(new Uint8Array(), 65_536), "more");
});

Deno.test("brotliHeaderLine: no newline within the cap is missing, however big the expansion", () => {
  const bomb = br(new Uint8Array(32 * 1024 * 1024).fill(0x61));
  assert.equal(brotliHeaderLine(bomb, 65_536), "missing");
  assert.equal(brotliHeaderLine(br("a".repeat(70_000) + "\n"), 65_536), "missing");
  assert.equal(brotliHeaderLine(br("short, no newline"), 65_536), "more");
});

Deno.test("brotliHeaderLine: bytes that are not brotli never yield a line", () => {
  // The tunnel answers 400 once the body ends without a line ("more" at the end).
  for (
    const bytes of [encoder.encode('{"dsn":"x"}\n{}'), crypto.getRandomValues(new Uint8Array(5000))]
  ) {
    const result = brotliHeaderLine(bytes, 65_536);
    assert.ok(typeof result === "string", "no line");
  }
});
