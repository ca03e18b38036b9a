/**
 * Sentry envelopes as the tunnel sees them: only the first line (the envelope header) is ever
 * decoded; everything after it stays opaque bytes.
 *
 * An envelope is `{header JSON}\n{item header}\n{payload}\n...`; payloads may be binary.
 */
import { type Dsn, parseDsn } from "./dsn.ts";

/**
 * The longest envelope header line the tunnel will look for. Real headers are a few hundred
 * bytes (dsn, event_id, sdk, trace); the cap keeps a body without a newline from being
 * buffered whole just to find it.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

const NEWLINE = 0x0a;

/** The outcome of reading an envelope header: the DSN it names, or a one-line reason. */
export type EnvelopeHeaderResult =
  | { readonly ok: true; readonly dsn: Dsn }
  | { readonly ok: false; readonly reason: string };

/** Where the header line ends, as far as the chunks seen so far tell. */
export type HeaderEnd =
  /** Absolute offset of the "\n" that ends the header line. */
  | { readonly kind: "found"; readonly offset: number }
  /** No newline yet and still under the cap: read more. */
  | { readonly kind: "more" }
  /** No newline within {@link MAX_HEADER_BYTES}: give up. */
  | { readonly kind: "too-long" };

// fatal: a header that is not valid UTF-8 is rejected rather than "repaired" with U+FFFD, so
// what the tunnel checked is byte for byte what the ingest will read. ignoreBOM keeps a BOM in
// the text, where JSON.parse refuses it, instead of silently dropping it.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Parse an envelope header line (without its "\n") and return the DSN it names.
 *
 * @example
 * const line = new TextEncoder().encode('{"dsn":"https://key@o1.ingest.sentry.io/42"}');
 * parseEnvelopeHeader(line); // { ok: true, dsn: { projectId: "42", ... } }
 */
export function parseEnvelopeHeader(line: Uint8Array): EnvelopeHeaderResult {
  if (line.byteLength > MAX_HEADER_BYTES) return fail("envelope header line too long");
  let text: string;
  try {
    text = utf8.decode(line);
  } catch {
    return fail("envelope header is not valid UTF-8");
  }
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch {
    return fail("envelope header is not JSON");
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    return fail("envelope header is not a JSON object");
  }
  if (!Object.hasOwn(header, "dsn")) return fail("envelope header has no dsn");
  const dsn: unknown = (header as Record<string, unknown>).dsn;
  if (typeof dsn !== "string") return fail("envelope header dsn is not a string");
  const parsed = parseDsnOnce(dsn);
  return parsed === null
    ? fail("envelope header dsn is not a valid DSN")
    : { ok: true, dsn: parsed };
}

/**
 * Look for the header line's end in the next chunk of a body. `seen` is how many bytes came
 * before `chunk`; scanning one chunk at a time keeps a body sent in tiny chunks linear.
 *
 * @example
 * findHeaderEnd(new TextEncoder().encode('{"dsn":"…"}\n{}'), 0); // { kind: "found", offset: 11 }
 */
export function findHeaderEnd(
  chunk: Uint8Array,
  seen: number,
  maxBytes: number = MAX_HEADER_BYTES,
): HeaderEnd {
  const room = maxBytes - seen; // newline positions that still fit under the cap
  if (room < 0) return { kind: "too-long" };
  const index = chunk.subarray(0, room + 1).indexOf(NEWLINE);
  if (index >= 0) return { kind: "found", offset: seen + index };
  return chunk.byteLength > room ? { kind: "too-long" } : { kind: "more" };
}

// Every envelope from an app names the same DSN: remembering the last one parsed saves a URL
// parse per envelope. parseDsn is pure, so the answer is the same; frozen, so it stays the same.
let lastDsn: { readonly text: string; readonly dsn: Dsn | null } | undefined;

function parseDsnOnce(text: string): Dsn | null {
  if (lastDsn?.text !== text) {
    const dsn = parseDsn(text);
    lastDsn = { text, dsn: dsn && Object.freeze(dsn) };
  }
  return lastDsn.dsn;
}

function fail(reason: string): EnvelopeHeaderResult {
  return { ok: false, reason };
}
