/** Precompression for the build (on disk) and the static index (in memory): brotli and gzip. */

/** The encodings of precompressed copies. */
export type Encoding = "br" | "gzip";

/** The suffix of a file's precompressed copy on disk, per encoding. */
export const ENCODED_SUFFIX: ReadonlyMap<Encoding, string> = new Map([
  ["br", ".br"],
  ["gzip", ".gz"],
]);

// Text, and binary formats not compressed already; images, fonts and archives would gain nothing.
const COMPRESSIBLE = /\.(css|csv|html|ico|js|json|map|md|mjs|svg|txt|wasm|webmanifest|xml)$/i;

/** Whether a file, by its extension, is worth compressing. */
export function isCompressible(name: string): boolean {
  return COMPRESSIBLE.test(name);
}

/** Brotli and gzip copies of `data`, each kept only if smaller. `best` (the build) uses node:zlib;
 * otherwise `CompressionStream`, so the server never loads Node's compatibility layer. */
export async function compressCopies(
  data: Uint8Array<ArrayBuffer>,
  options: { readonly best: boolean },
): Promise<Map<Encoding, Uint8Array<ArrayBuffer>>> {
  const [br, gz] = options.best
    ? await bestCopies(data)
    : await Promise.all((["brotli", "gzip"] as const).map((format) =>
      new Response(new Blob([data]).stream().pipeThrough(new CompressionStream(format))).bytes()
    ));
  const copies = new Map<Encoding, Uint8Array<ArrayBuffer>>();
  if (br.length < data.length) copies.set("br", br);
  if (gz.length < data.length) copies.set("gzip", gz);
  return copies;
}

async function bestCopies(data: Uint8Array): Promise<Uint8Array<ArrayBuffer>[]> {
  const { brotliCompressSync, constants: zlib, gzipSync } = await import("node:zlib");
  const br = brotliCompressSync(data, {
    params: {
      [zlib.BROTLI_PARAM_QUALITY]: zlib.BROTLI_MAX_QUALITY,
      [zlib.BROTLI_PARAM_SIZE_HINT]: data.length,
    },
  });
  return [new Uint8Array(br), new Uint8Array(gzipSync(data, { level: 9 }))];
}
