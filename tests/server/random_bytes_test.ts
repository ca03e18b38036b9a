import assert from "node:assert/strict";
import { randomBytes, randomDraws } from "../../server/random_bytes.ts";

Deno.test("randomBytes: the CSPRNG is drawn once per 4 KiB taken, not once per call", () => {
  const before = randomDraws.count;
  let taken = 0;
  for (let i = 0; i < 2000; i++) taken += randomBytes(16).length;
  const draws = randomDraws.count - before;
  // 32,000 bytes: 8 blocks of 4096, give or take the block in use when the test began.
  assert.equal(taken, 32_000);
  assert.ok(draws >= 7 && draws <= 9, `${draws} draws for ${taken} bytes`);
});

Deno.test("randomBytes: no byte is handed out twice", () => {
  // Views taken now point at distinct places; a byte given twice would share a place.
  const seen = new Set<number>();
  let draws = randomDraws.count;
  let refills = 0;
  for (let i = 0; i < 1000; i++) {
    const view = randomBytes(13);
    if (randomDraws.count !== draws) {
      draws = randomDraws.count;
      refills++;
      seen.clear(); // the block was refilled: its old bytes had all been handed out
    }
    for (let at = view.byteOffset; at < view.byteOffset + view.length; at++) {
      assert.ok(!seen.has(at), `byte ${at} handed out twice`);
      seen.add(at);
    }
  }
  assert.ok(refills >= 2, "the test crossed refills");
  const a = randomBytes(16).toHex();
  const b = randomBytes(16).toHex();
  assert.match(a, /^[0-9a-f]{32}$/);
  assert.notEqual(a, b);
});

Deno.test("randomBytes: refuses sizes it was not made for", () => {
  for (const n of [0, -1, 257, 4096, Number.NaN, 1.5e9]) {
    assert.throws(() => randomBytes(n), RangeError, String(n));
  }
});
