/**
 * The envelope header line of a compressed body (gzip, deflate or br), decoded incrementally:
 * each compressed byte is fed to the decoder once, whatever the chunking, and the decoder is
 * stopped as soon as the line is found or its output passes the header cap.
 *
 * node:zlib streams are used for all three: they decode in `chunkSize` steps, so a few bytes
 * of a decompression bomb yield at most one step of output before the cap stops them, and gzip
 * bodies of several members (allowed by RFC 1952) decode as one. node:zlib is loaded with the
 * first compressed body: it brings Node's compatibility layer (about 5 MB of resident memory),
 * which a server that never receives one does not need.
 */
import { findHeaderEnd, MAX_HEADER_BYTES } from "./envelope.ts";

/** Content encodings whose header line the tunnel can read. */
export type HeadFormat = "gzip" | "deflate" | "br";

/** What the decoded bytes say so far. */
export type LineOutcome =
  | { readonly kind: "line"; readonly line: Uint8Array<ArrayBuffer> }
  | { readonly kind: "more" } // no newline yet; more input may bring one
  | { readonly kind: "missing" } // no newline within the cap, or the body ended without one
  | { readonly kind: "corrupt" }; // not valid data in this encoding

/** A decoder fed by hand, one compressed chunk at a time. */
export interface HeaderLineDecoder {
  /** Decode one more chunk; resolves once it is consumed or the outcome is decided. */
  push(chunk: Uint8Array): Promise<LineOutcome>;
  /** No more input: resolves with the final outcome ("more" becomes "missing"). */
  end(): Promise<LineOutcome>;
  /** Compressed bytes handed to the decoder so far (each body byte counts once). */
  readonly fedBytes: number;
  /** Decompressed bytes the decoder produced, line or not (bounded by the cap plus a step). */
  readonly producedBytes: number;
  /** Stop decoding and free the decoder; safe to call more than once. */
  dispose(): void;
}

// One decoding step's output. Small enough that overshooting the cap costs little.
const STEP_BYTES = 16 * 1024;

const MORE: LineOutcome = { kind: "more" };
const MISSING: LineOutcome = { kind: "missing" };
const CORRUPT: LineOutcome = { kind: "corrupt" };

/**
 * Start decoding a body in `format`, looking for a line of at most `maxLine` bytes.
 *
 * @example
 * const decoder = await createHeaderLineDecoder("gzip");
 * const outcome = await decoder.push(firstChunk); // { kind: "more" } until the line is in
 */
export async function createHeaderLineDecoder(
  format: HeadFormat,
  maxLine: number = MAX_HEADER_BYTES,
): Promise<HeaderLineDecoder> {
  const { createBrotliDecompress, createGunzip, createInflate } = await import("node:zlib");
  const options = { chunkSize: STEP_BYTES };
  const stream = format === "br"
    ? createBrotliDecompress(options)
    : format === "gzip"
    ? createGunzip(options)
    : createInflate(options);
  // The line's pieces so far: at most the cap's worth, in steps of STEP_BYTES.
  const pieces: Uint8Array[] = [];
  let decoded = 0;
  let outcome: LineOutcome = MORE;
  let fedBytes = 0;
  let producedBytes = 0;
  // The caller awaits each push before the next, so at most one is waiting at a time. One
  // resolver, not a race against a shared promise: a body in 1-byte chunks would pile a
  // reaction per byte onto that promise.
  let waiting: ((outcome: LineOutcome) => void) | undefined;
  const settle = () => {
    const resolve = waiting;
    waiting = undefined;
    resolve?.(outcome);
  };

  const decide = (final: LineOutcome) => {
    if (outcome !== MORE) return;
    outcome = final;
    // Stops any further decoding steps: this is what bounds a bomb's output.
    stream.destroy();
    settle();
  };
  stream.on("data", (chunk: Uint8Array) => {
    producedBytes += chunk.byteLength;
    if (outcome !== MORE) return;
    const end = findHeaderEnd(chunk, decoded, maxLine);
    if (end.kind === "too-long") return decide(MISSING);
    const piece = chunk.subarray(0, end.kind === "found" ? end.offset - decoded : chunk.length);
    pieces.push(piece);
    decoded += piece.byteLength;
    if (end.kind === "found") decide({ kind: "line", line: joined(pieces, decoded) });
  });
  stream.on("error", () => decide(CORRUPT));
  // After the end of the input, or an error: nothing more will be decoded.
  stream.on("close", () => decide(MISSING));

  return {
    push(chunk) {
      if (outcome !== MORE || chunk.byteLength === 0) return Promise.resolve(outcome);
      fedBytes += chunk.byteLength;
      return new Promise<LineOutcome>((resolve) => {
        waiting = resolve;
        // Called once the chunk is decoded; if the outcome is decided first, decide() answers.
        stream.write(chunk, settle);
      });
    },
    end() {
      if (outcome !== MORE) return Promise.resolve(outcome);
      return new Promise<LineOutcome>((resolve) => {
        waiting = resolve;
        stream.end();
      });
    },
    get fedBytes() {
      return fedBytes;
    },
    get producedBytes() {
      return producedBytes;
    },
    dispose() {
      decide(MISSING);
    },
  };
}

function joined(pieces: readonly Uint8Array[], length: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(length);
  let offset = 0;
  for (const piece of pieces) {
    out.set(piece, offset);
    offset += piece.byteLength;
  }
  return out;
}
