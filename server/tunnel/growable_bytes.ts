/**
 * Bytes appended piece by piece into one buffer that doubles as it fills: memory stays within
 * 2x the bytes held however small the pieces, and each byte is copied O(1) times.
 *
 * A body read in 1-byte chunks is why: Deno hands each chunk out as a view on its own 64 KiB
 * buffer, so keeping the chunks themselves would hold 64 KiB per byte.
 */
export class GrowableBytes {
  // Shared while nothing is held: it has no room, so the first append replaces it. Every
  // ArrayBuffer V8 makes costs about a microsecond, and readers make one of these per answer.
  #buffer: Uint8Array<ArrayBuffer> = EMPTY;
  #length = 0;

  /** Bytes held. */
  get length(): number {
    return this.#length;
  }

  /**
   * Append a copy of `bytes`; the first piece is kept as is (no copy) when it does not waste
   * most of its buffer and is not `borrowed` (its buffer reused later): the common case of a
   * body that arrives in one chunk.
   */
  append(bytes: Uint8Array, borrowed = false): void {
    if (bytes.byteLength === 0) return;
    if (
      this.#length === 0 && !borrowed && bytes.buffer instanceof ArrayBuffer &&
      bytes.byteLength * 2 >= bytes.buffer.byteLength
    ) {
      this.#buffer = bytes as Uint8Array<ArrayBuffer>;
      this.#length = bytes.byteLength;
      return;
    }
    const needed = this.#length + bytes.byteLength;
    if (
      needed > this.#buffer.byteLength || this.#buffer.byteLength !== this.#buffer.buffer.byteLength
    ) {
      // The first copy is the size asked for (most bodies come whole); later ones double.
      const grown = new Uint8Array(
        this.#length === 0 ? needed : Math.max(needed, this.#length * 2),
      );
      grown.set(this.#buffer.subarray(0, this.#length));
      this.#buffer = grown;
    }
    this.#buffer.set(bytes, this.#length);
    this.#length = needed;
  }

  /** The bytes held, as a view (valid until the next append). */
  bytes(): Uint8Array<ArrayBuffer> {
    // Never a view on the shared empty buffer: a caller could detach it (transfer) for all.
    return this.#length === 0 ? new Uint8Array(0) : this.#buffer.subarray(0, this.#length);
  }
}

const EMPTY = new Uint8Array(0);
