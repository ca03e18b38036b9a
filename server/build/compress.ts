/**
 * Precompression shared by the build (`static/build/`, written to disk) and the static index
 * (every other file of `static/`, kept in memory): which files are worth it, and brotli and
 * gzip copies that are kept only when they are smaller.
 */
import { brotliCompressSync, constants as zlib, gzipSync } from "node:zlib";
import type { Encoding } from "../http/accept_encoding.ts";

/** The suffix of a file's precompressed copy on disk, per encoding. */
export const ENCODED_SUFFIX: ReadonlyMap<Encoding, string> = new Map([["br", ".br"], [
  "gzip",
  ".gz",
]]);

// Text formats, and binary ones that are not compressed already (wasm, ico). Images, fonts
// (woff2 is brotli inside) and archives would gain nothing.
const COMPRESSIBLE_EXTENSIONS: ReadonlySet<string> = new Set([
  "css",
  "csv",
  "html",
  "ico",
  "js",
  "json",
  "map",
  "md",
  "mjs",
  "svg",
  "txt",
  "wasm",
  "webmanifest",
  "xml",
]);

/** Whether a file, by its extension, is worth compressing. */
export function isCompressible(name: string): boolean {
  const dot = name.lastIndexOf(".");
  return dot >= 0 && COMPRESSIBLE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase());
}

/**
 * Brotli (best quality) and gzip (level 9) copies of `data`, each only when it is smaller
 * than `data`: a copy that does not pay would only cost a `Vary` and a cache entry.
 *
 * @example
 * const copies = compressCopies(new TextEncoder().encode("a".repeat(1000)));
 * copies.get("br")?.length; // far below 1000
 */
export function compressCopies(data: Uint8Array): Map<Encoding, Uint8Array<ArrayBuffer>> {
  const copies = new Map<Encoding, Uint8Array<ArrayBuffer>>();
  const br = brotliCompressSync(data, {
    params: {
      [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
      [zlib.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  });
  const gz = gzipSync(data, { level: 9 });
  if (br.length < data.length) copies.set("br", new Uint8Array(br));
  if (gz.length < data.length) copies.set("gzip", new Uint8Array(gz));
  return copies;
}
