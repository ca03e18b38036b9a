/**
 * Random bytes for the values made on every request (CSP nonce, trace and span ids), drawn from
 * the platform's CSPRNG a block at a time.
 *
 * A call of `crypto.getRandomValues` is an op into Rust: about 0.2-0.7 µs however few bytes it
 * fills, three times per traced page. One 4 KiB draw serves some 100 pages. The bytes are as
 * unpredictable as the platform's (Node's `crypto.randomUUID` keeps such a cache too), and each is
 * handed out once: a view is never given twice, and the block is refilled only when used up.
 */

const BLOCK_BYTES = 4096;
const block = new Uint8Array(BLOCK_BYTES);
let next = BLOCK_BYTES;

/** Counts block draws, for tests: the work done must follow the bytes taken, not the calls. */
export const randomDraws = { count: 0 };

/**
 * `n` fresh random bytes (1-256), as a view into the current block. Read it at once (turn it into
 * a string): the view is not the caller's to keep, as its bytes belong to the block.
 *
 * @example
 * randomBytes(16).toHex(); // "3f0c…", 32 hex digits
 */
export function randomBytes(n: number): Uint8Array<ArrayBuffer> & Encodable {
  if (!(n >= 1 && n <= 256)) throw new RangeError(`randomBytes takes 1 to 256 bytes, not ${n}`);
  if (next + n > BLOCK_BYTES) {
    crypto.getRandomValues(block);
    randomDraws.count++;
    next = 0;
  }
  const view = block.subarray(next, next + n);
  next += n;
  return view as Uint8Array<ArrayBuffer> & Encodable;
}

/** Uint8Array's encoders (ES2026), not yet in TypeScript's library here. */
export interface Encodable {
  toHex(): string;
  toBase64(): string;
}
