import assert from "node:assert/strict";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { compressCopies, isCompressible } from "../../../server/http/compress.ts";

Deno.test("isCompressible: text and uncompressed binary formats, by extension", () => {
  for (const name of ["a.js", "b.CSS", "favicon.svg", "robots.txt", "x.json", "m.wasm", "f.ico"]) {
    assert.ok(isCompressible(name), name);
  }
  for (const name of ["a.png", "b.woff2", "c.jpg", "d.gz", "e.br", "noext", "svg"]) {
    assert.ok(!isCompressible(name), name);
  }
});

for (const best of [true, false]) {
  Deno.test(`compressCopies (best: ${best}): brotli and gzip that decode to the input, only when smaller`, async () => {
    const text = new TextEncoder().encode("User-agent: *\nAllow: /\n".repeat(50));
    const copies = await compressCopies(text, { best });
    assert.deepEqual([...copies.keys()].sort(), ["br", "gzip"]);
    assert.deepEqual(new Uint8Array(brotliDecompressSync(copies.get("br")!)), text);
    assert.deepEqual(new Uint8Array(gunzipSync(copies.get("gzip")!)), text);
    for (const copy of copies.values()) assert.ok(copy.length < text.length);

    // 23 bytes, like robots.txt: gzip's header alone makes the copy larger.
    const tiny = await compressCopies(new TextEncoder().encode("User-agent: *\nAllow: /\n"), {
      best,
    });
    assert.ok(!tiny.has("gzip"));
    const random = crypto.getRandomValues(new Uint8Array(2048));
    assert.equal((await compressCopies(random, { best })).size, 0);
  });
}
