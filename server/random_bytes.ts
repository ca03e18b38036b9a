/**
 * Random values for what is made on every request (CSP nonce, trace and span ids), drawn from the
 * platform's CSPRNG a block at a time.
 *
 * A call of `crypto.getRandomValues` is an op into Rust: about 0.2-0.7 µs however few bytes it
 * fills, three times per traced page. One 4 KiB draw serves some 100 pages. The bytes are as
 * unpredictable as the platform's (Node's `crypto.randomUUID` keeps such a cache too). Each byte
 * is used once, and only as text: the block itself never leaves this module, so no caller can read
 * bytes meant for the next nonce, keep a view that changes, or detach the block.
 */

const BLOCK_BYTES = 4096;
const MAX_TAKE = 256;
const block = new Uint8Array(BLOCK_BYTES) as Uint8Array & Encodable;
let next = BLOCK_BYTES;

/** Counts block draws, for tests: the work done must follow the bytes taken, not the calls. */
export const randomDraws = { count: 0 };

/**
 * `n` fresh random bytes (1-256) as lowercase hex.
 *
 * @example
 * randomHex(16); // "3f0c…", 32 hex digits
 */
export function randomHex(n: number): string {
  return take(n).toHex();
}

/**
 * `n` fresh random bytes (1-256) in base64.
 *
 * @example
 * randomBase64(16); // "q83v…==", 24 characters
 */
export function randomBase64(n: number): string {
  return take(n).toBase64();
}

function take(n: number): Encodable {
  if (!Number.isInteger(n) || n < 1 || n > MAX_TAKE) {
    throw new RangeError(`random values take 1 to ${MAX_TAKE} whole bytes, not ${n}`);
  }
  if (next + n > BLOCK_BYTES) {
    crypto.getRandomValues(block);
    randomDraws.count++;
    next = 0;
  }
  const view = block.subarray(next, next + n) as Uint8Array & Encodable;
  next += n;
  return view;
}

/** Uint8Array's encoders (ES2026), not yet in TypeScript's library here. */
interface Encodable {
  toHex(): string;
  toBase64(): string;
}
