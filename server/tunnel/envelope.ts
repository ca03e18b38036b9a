/** The envelope's header line, the only part decoded; the raw bytes are forwarded unchanged. Via
 * node:zlib, whose `chunkSize` steps stop a bomb one step past the cap: Deno 2.9's
 * DecompressionStream hands out a write's whole output at once and refuses multi-member gzip. */
import { type Dsn, parseDsn } from "../dsn.ts";
import { ByteBuffer, type Bytes } from "../http/request_body.ts";
import { type Encoding, HEADER_MISSING, NOT_DECODABLE, type Rejection } from "./policy.ts";

/** The longest header line looked for: real ones are a few hundred bytes (dsn, sdk, trace). */
export const MAX_HEADER_BYTES = 64 * 1024;

// Room for an incompressible 64 KiB line; stops bodies of empty deflate blocks that end none.
const MAX_ENCODED_HEADER_BYTES = 256 * 1024;
const STEP_BYTES = 16 * 1024;

// fatal: what the tunnel checked is what the ingest reads; ignoreBOM: JSON.parse refuses a BOM.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The DSN a header line (without its "\n") names, or a one-line reason. */
export function parseEnvelopeHeader(line: Uint8Array): Dsn | string {
  if (line.byteLength > MAX_HEADER_BYTES) return "envelope header line too long";
  let header: unknown;
  try {
    header = JSON.parse(utf8.decode(line));
  } catch (error) {
    return error instanceof SyntaxError
      ? "envelope header is not JSON"
      : "envelope header is not valid UTF-8";
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    return "envelope header is not a JSON object";
  }
  if (!Object.hasOwn(header, "dsn")) return "envelope header has no dsn";
  const dsn: unknown = (header as { dsn: unknown }).dsn;
  if (typeof dsn !== "string") return "envelope header dsn is not a string";
  // An app sends one DSN: the last one parsed is kept, frozen so no caller can change it.
  if (last?.text !== dsn) last = { text: dsn, dsn: Object.freeze(parseDsn(dsn)) };
  return last.dsn ?? "envelope header dsn is not a valid DSN";
}

let last: { readonly text: string; readonly dsn: Dsn | null } | undefined;

/** A node:zlib decoder of `encoding`, in steps of STEP_BYTES; zlib loads on first use only. */
export async function decoder(encoding: Encoding) {
  const zlib = await import("node:zlib");
  const create = {
    br: zlib.createBrotliDecompress,
    gzip: zlib.createGunzip,
    deflate: zlib.createInflate,
  };
  return create[encoding]({ chunkSize: STEP_BYTES });
}

/** Read `next()` chunks until the header line is whole, decoding each byte once (1-byte chunks);
 * with the line, every raw body byte read to find it, in a buffer that grows to `length` at most
 * (the declared Content-Length: the whole body then fills it exactly, never copied again). */
export async function readHead(
  next: () => Promise<Bytes | undefined>,
  encoding: Encoding | null,
  length = Infinity,
): Promise<{ readonly line: Uint8Array; readonly raw: ByteBuffer } | Rejection> {
  const raw = new ByteBuffer(length);
  const line = new LineCollector();
  if (encoding === null) {
    for (;;) {
      const chunk = await next();
      if (chunk === undefined) return HEADER_MISSING;
      raw.append(chunk);
      const found = line.take(chunk);
      if (found !== undefined) return found instanceof Uint8Array ? { line: found, raw } : found;
    }
  }
  const stream = await decoder(encoding);
  let outcome: Uint8Array | Rejection | undefined;
  // One resolver per write: a shared promise would gather a reaction per 1-byte chunk.
  let wake = () => {};
  const decide = (value: Uint8Array | Rejection) => {
    outcome ??= value;
    stream.destroy(); // no further steps: what bounds a bomb
    wake();
  };
  stream.on("data", (chunk: Uint8Array) => {
    const found = outcome === undefined ? line.take(chunk) : undefined;
    if (found !== undefined) decide(found);
  });
  stream.on("error", () => decide(NOT_DECODABLE));
  stream.on("close", () => decide(HEADER_MISSING));
  try {
    while (outcome === undefined) {
      const seen = raw.length;
      const chunk = await next();
      if (chunk !== undefined) raw.append(chunk);
      const fed = chunk?.subarray(0, Math.max(0, MAX_ENCODED_HEADER_BYTES - seen));
      await new Promise<void>((resolve) => {
        wake = resolve;
        // The body ended or passed the encoded cap: what the decoder has decides.
        if (fed === undefined || fed.byteLength === 0 && raw.length >= MAX_ENCODED_HEADER_BYTES) {
          stream.end();
        } else if (fed.byteLength === 0) resolve();
        else stream.write(fed, () => resolve());
      });
    }
  } finally {
    stream.destroy();
  }
  return outcome instanceof Uint8Array ? { line: outcome, raw } : outcome;
}

/** Decoded bytes up to the first "\n", at most {@link MAX_HEADER_BYTES} of them. */
class LineCollector {
  readonly #line = new ByteBuffer();

  /** The line once `chunk` completes it, HEADER_MISSING past the cap, else undefined. */
  take(chunk: Uint8Array): Uint8Array | Rejection | undefined {
    const end = chunk.indexOf(0x0a);
    const piece = end < 0 ? chunk : chunk.subarray(0, end);
    if (this.#line.length + piece.byteLength > MAX_HEADER_BYTES) return HEADER_MISSING;
    this.#line.append(piece);
    return end < 0 ? undefined : this.#line.bytes();
  }
}

/** Items whose types are read at most: Relay takes 30 attachments; real envelopes hold a few. */
export const MAX_ITEMS = 100;

/** The types of an envelope's items (held whole, not encoded), as far as their header lines read
 * well: the rate limits' categories. Linear in the bytes; payloads are skipped, never parsed. */
export function itemTypes(envelope: Uint8Array): string[] {
  const types: string[] = [];
  let at = envelope.indexOf(0x0a) + 1; // past the envelope's own header
  while (at > 0 && at < envelope.byteLength && types.length < MAX_ITEMS) {
    const end = envelope.indexOf(0x0a, at);
    let header: { type?: unknown; length?: unknown };
    try {
      header = JSON.parse(utf8.decode(envelope.subarray(at, end < 0 ? undefined : end)));
    } catch {
      break;
    }
    if (typeof header?.type !== "string" || !Object.hasOwn(header, "type") || end < 0) break;
    types.push(header.type);
    // A payload with a length is that many bytes, then "\n" or the end; else it ends at a "\n".
    const { length } = header;
    const sized = Number.isSafeInteger(length) && (length as number) >= 0;
    at = sized ? end + 1 + (length as number) : envelope.indexOf(0x0a, end + 1) + 1;
    if (sized && envelope[at] === 0x0a) at++;
  }
  return types;
}
