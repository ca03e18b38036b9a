import assert from "node:assert/strict";
import { GrowableBytes } from "../../../server/tunnel/growable_bytes.ts";

Deno.test("GrowableBytes: appends in order; 1-byte pieces of big buffers hold no big buffer", () => {
  const bytes = new GrowableBytes();
  for (let i = 0; i < 1000; i++) {
    // As Deno hands out a 1-byte chunk: a view on its own 64 KiB buffer.
    const chunk = new Uint8Array(64 * 1024).subarray(0, 1);
    chunk[0] = i & 255;
    bytes.append(chunk);
  }
  assert.equal(bytes.length, 1000);
  assert.deepEqual([...bytes.bytes().subarray(0, 3)], [0, 1, 2]);
  assert.ok(bytes.bytes().buffer.byteLength <= 2 * 1000, "at most 2x the bytes held");
});

Deno.test("GrowableBytes: a whole first chunk is kept without a copy and never written to", () => {
  const first = new Uint8Array([1, 2, 3]);
  const bytes = new GrowableBytes();
  bytes.append(first);
  assert.equal(bytes.bytes().buffer, first.buffer);
  bytes.append(new Uint8Array([4]));
  assert.deepEqual([...bytes.bytes()], [1, 2, 3, 4]);
  assert.deepEqual([...first], [1, 2, 3]);
  bytes.append(new Uint8Array());
  assert.equal(bytes.length, 4);
});

Deno.test("GrowableBytes: an empty one hands out a buffer of its own, which its taker may detach", () => {
  const first = new GrowableBytes().bytes();
  assert.equal(first.byteLength, 0);
  first.buffer.transfer();
  // Others still work: no buffer was shared with the one detached.
  const other = new GrowableBytes();
  assert.equal(other.bytes().byteLength, 0);
  other.append(new Uint8Array([7]), true);
  assert.deepEqual([...other.bytes()], [7]);
});
