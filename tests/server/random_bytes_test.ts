import assert from "node:assert/strict";
import { randomBase64, randomDraws, randomHex } from "../../server/random_bytes.ts";

const BLOCK = 4096;

/**
 * Replace the CSPRNG, for one test, with a known stream: every draw fills its array with the
 * stream's next bytes. Returns the stream so far (each draw's bytes, in order).
 */
function withKnownStream(run: (stream: () => number[][]) => void): void {
  const original = crypto.getRandomValues;
  const draws: number[][] = [];
  let state = 12345;
  crypto.getRandomValues = (<T extends ArrayBufferView | null>(array: T): T => {
    const bytes = new Uint8Array(array!.buffer, array!.byteOffset, array!.byteLength);
    for (let i = 0; i < bytes.length; i++) {
      state = (state * 1103515245 + 12345) >>> 0;
      bytes[i] = state >>> 24;
    }
    draws.push([...bytes]);
    return array;
  }) as typeof crypto.getRandomValues;
  try {
    run(() => draws);
  } finally {
    crypto.getRandomValues = original;
  }
}

const hex = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, "0")).join("");

Deno.test("randomHex: every value is the CSPRNG's next unused bytes; none is given twice", () => {
  withKnownStream((stream) => {
    // Use up the block in use when the test began: the value that draws anew is the first 256
    // bytes of the stream.
    while (stream().length === 0) randomHex(256);
    const taken: [number, string][] = [];
    const sizes = [16, 8, 16, 1, 13, 256, 7];
    for (let i = 0; i < 3000; i++) {
      const n = sizes[i % sizes.length];
      taken.push([n, randomHex(n)]);
    }
    // Walk the draws as the values must have come from them: in order, each value the bytes right
    // after the last, moving to the next draw only when the value would not fit in this one.
    const draws = stream();
    let draw = 0;
    let at = 256;
    for (const [n, value] of taken) {
      assert.equal(value.length, 2 * n, "as many bytes as asked for");
      if (at + n > BLOCK) {
        draw++;
        at = 0;
      }
      assert.ok(draw < draws.length, "a value came from a draw that never happened");
      assert.equal(value, hex(draws[draw].slice(at, at + n)));
      at += n;
    }
    assert.equal(draw, draws.length - 1, "every draw was used");
  });
});

Deno.test("randomHex: the CSPRNG is drawn once per 4 KiB taken, not once per call", () => {
  const before = randomDraws.count;
  let taken = 0;
  for (let i = 0; i < 2000; i++) taken += randomHex(16).length / 2;
  const draws = randomDraws.count - before;
  // 32,000 bytes: 8 blocks of 4096, give or take the block in use when the test began.
  assert.equal(taken, 32_000);
  assert.ok(draws >= 7 && draws <= 9, `${draws} draws for ${taken} bytes`);
});

Deno.test("randomBase64 and randomHex: the encodings of fresh bytes", () => {
  const a = randomHex(16);
  const b = randomHex(16);
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, b);
  assert.match(randomBase64(16), /^[A-Za-z0-9+/]{22}==$/);
});

Deno.test("random values: sizes they were not made for are refused", () => {
  for (const n of [0, -1, 257, 4096, 1.5, 16.9, Number.NaN, Infinity, 1.5e9]) {
    assert.throws(() => randomHex(n), RangeError, String(n));
    assert.throws(() => randomBase64(n), RangeError, String(n));
  }
});
