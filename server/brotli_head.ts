/**
 * The header line of a brotli-compressed envelope, found with bounded memory.
 *
 * Brotli can turn a few bytes into megabytes, so the decoder is never allowed to produce more
 * than the header cap: `maxOutputLength` stops it, and a shorter input prefix is tried instead.
 * Decoding a truncated prefix with BROTLI_OPERATION_FLUSH yields everything decodable so far,
 * which is all that is needed to see the first line.
 */
import { brotliDecompressSync, constants } from "node:zlib";

/** What the prefix says so far. */
export type BrotliHead =
  | { readonly line: Uint8Array<ArrayBuffer> }
  | "more" // no newline yet, and more input could bring one
  | "missing" // no newline within `maxLine` decoded bytes
  | "corrupt"; // not brotli

/**
 * Look for the first line in the decompression of `prefix`.
 *
 * @example
 * brotliHeaderLine(brotliCompressSync('{"dsn":"..."}\n{}'), 65536); // { line: ... }
 */
export function brotliHeaderLine(prefix: Uint8Array, maxLine: number): BrotliHead {
  let output = decode(prefix, maxLine);
  if (output === "corrupt") return "corrupt";
  let capped = false;
  if (output === "too-much") {
    // The prefix decodes past the cap: find the longest prefix that does not, by bisection.
    capped = true;
    let lo = 0;
    let hi = prefix.length;
    let best: Uint8Array = new Uint8Array();
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      const attempt = decode(prefix.subarray(0, mid), maxLine);
      if (attempt === "corrupt") return "corrupt";
      if (attempt === "too-much") hi = mid - 1;
      else {
        best = attempt;
        lo = mid;
      }
    }
    output = best;
  }
  const newline = output.indexOf(0x0a);
  if (newline !== -1 && newline <= maxLine) return { line: output.slice(0, newline) };
  return capped || output.length > maxLine ? "missing" : "more";
}

function decode(input: Uint8Array, maxLine: number): Uint8Array | "too-much" | "corrupt" {
  if (input.length === 0) return new Uint8Array();
  try {
    return brotliDecompressSync(input, {
      finishFlush: constants.BROTLI_OPERATION_FLUSH,
      maxOutputLength: maxLine + 1,
    });
  } catch (error) {
    return error instanceof RangeError ? "too-much" : "corrupt";
  }
}
