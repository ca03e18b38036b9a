import assert from "node:assert/strict";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { compressCopies, isCompressible } from "../../../server/build/compress.ts";

Deno.test("isCompressible: text and uncompressed binary formats, by extension", () => {
  for (const name of ["a.js", "b.CSS", "favicon.svg", "robots.txt", "x.json", "m.wasm", "f.ico"]) {
    assert.ok(isCompressible(name), name);
  }
  for (const name of ["a.png", "b.woff2", "c.jpg", "d.gz", "e.br", "noext", "svg"]) {
    assert.ok(!isCompressible(name), name);
  }
});

Deno.test("compressCopies: brotli and gzip that decode to the input, only when smaller", () => {
  const text = new TextEncoder().encode("User-agent: *\nAllow: /\n".repeat(50));
  const copies = compressCopies(text);
  assert.deepEqual([...copies.keys()].sort(), ["br", "gzip"]);
  assert.deepEqual(new Uint8Array(brotliDecompressSync(copies.get("br")!)), text);
  assert.deepEqual(new Uint8Array(gunzipSync(copies.get("gzip")!)), text);
  for (const copy of copies.values()) assert.ok(copy.length < text.length);

  // 23 bytes, like robots.txt: gzip's header alone makes the copy larger.
  const tiny = compressCopies(new TextEncoder().encode("User-agent: *\nAllow: /\n"));
  assert.ok(!tiny.has("gzip"));
  assert.equal(compressCopies(crypto.getRandomValues(new Uint8Array(2048))).size, 0);
});
