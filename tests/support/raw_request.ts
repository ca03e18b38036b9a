/**
 * Hostile HTTP/1.1 requests as data: fast-check arbitraries for every part a client controls
 * (method, target, version, Host, other headers, body framing, how the bytes are split into
 * writes) and the pure rendering of one request to the bytes sent on the wire. The head's
 * generators are in raw_request_head.ts, the body's in raw_request_body.ts, and the word lists
 * both draw from in raw_request_words.ts.
 *
 * @example
 * const arb = rawRequestArbitrary({ port, staticPaths: ["/robots.txt"], nearMissDsns: [] });
 * fc.sample(arb, 1).map(renderRequest);
 */
import fc from "fast-check";
import { framedBodyArbitrary } from "./raw_request_body.ts";
import {
  hostArbitrary,
  methodArbitrary,
  otherHeadersArbitrary,
  targetArbitrary,
} from "./raw_request_head.ts";

// The fuzz verdict checks methods and names against the same lists the generators draw from.
export { METHODS, PROTOTYPE_NAMES } from "./raw_request_words.ts";

/** One request exactly as it will be written: strings are latin1, one char per byte. */
export interface RawRequest {
  readonly method: string;
  readonly target: string;
  readonly version: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: string;
  /** Offsets where the rendered bytes are cut into separate writes (taken modulo length). */
  readonly cuts: readonly number[];
}

/** What the generator needs to know about the server under test. */
export interface RequestSpace {
  readonly port: number;
  /** Static file paths that exist (e.g. `/robots.txt`, the hashed client entry). */
  readonly staticPaths: readonly string[];
  /** DSNs that look like the server's own but differ (the tunnel must never forward them). */
  readonly nearMissDsns: readonly string[];
  /** Request bodies that are compressed envelopes naming a near-miss DSN, by encoding. */
  readonly compressedBodies: readonly { encoding: string; body: string }[];
}

/**
 * A whole hostile request, headers in a random order; one in seven is a well-formed envelope
 * post naming a near-miss DSN, so the tunnel's DSN check meets every such DSN many times a run
 * (among the fully random requests one came about every few thousand).
 */
export function rawRequestArbitrary(space: RequestSpace): fc.Arbitrary<RawRequest> {
  if (space.nearMissDsns.length === 0) return hostileRequestArbitrary(space);
  return fc.oneof(
    { withCrossShrink: true },
    { weight: 6, arbitrary: hostileRequestArbitrary(space) },
    { weight: 1, arbitrary: nearMissPostArbitrary(space) },
  );
}

// POST /monitoring, well framed, with an envelope whose header names a near-miss DSN.
function nearMissPostArbitrary(space: RequestSpace): fc.Arbitrary<RawRequest> {
  return fc.record({
    dsn: fc.constantFrom(...space.nearMissDsns),
    rest: fc.string({ maxLength: 64 }).map((text) => text.replace(/[^\x20-\x7e\n]/g, "")),
    cuts: fc.array(fc.nat(), { maxLength: 4 }),
  }).map(({ dsn, rest, cuts }) => {
    const body = `${JSON.stringify({ dsn })}\n${rest}`;
    return {
      method: "POST",
      target: "/monitoring",
      version: "HTTP/1.1",
      headers: [
        ["Host", `127.0.0.1:${space.port}`],
        ["Content-Type", "text/plain;charset=UTF-8"],
        ["Content-Length", String(body.length)],
      ],
      body,
      cuts,
    };
  });
}

function hostileRequestArbitrary(space: RequestSpace): fc.Arbitrary<RawRequest> {
  const hosts = fc.oneof(
    { withCrossShrink: true },
    { weight: 6, arbitrary: hostArbitrary(space.port).map((h) => [h]) },
    { weight: 1, arbitrary: fc.constant([] as string[]) },
    { weight: 1, arbitrary: fc.array(hostArbitrary(space.port), { minLength: 2, maxLength: 2 }) },
  );
  const version = fc.oneof(
    { withCrossShrink: true },
    { weight: 12, arbitrary: fc.constant("HTTP/1.1") },
    { weight: 2, arbitrary: fc.constant("HTTP/1.0") },
    { weight: 1, arbitrary: fc.constantFrom("HTTP/1.2", "HTTP/2.0", "http/1.1", "HTTP/0.9", "") },
  );
  return fc.record({
    method: methodArbitrary(),
    target: targetArbitrary(space),
    version,
    hosts,
    other: otherHeadersArbitrary(),
    framed: fc.oneof(
      { withCrossShrink: true },
      { weight: 1, arbitrary: fc.constant({ body: "", headers: [] as [string, string][] }) },
      { weight: 2, arbitrary: framedBodyArbitrary(space) },
    ),
    cuts: fc.array(fc.nat(), { maxLength: 4 }),
  }).map(({ method, target, version, hosts, other, framed, cuts }) => ({
    method,
    target,
    version,
    headers: [
      ...hosts.map((h) => ["Host", h] as [string, string]),
      ...other,
      ...framed.headers,
    ],
    body: framed.body,
    cuts,
  }));
}

/** The bytes of `request`, one byte per char (chars above 0xff are not generated). */
export function renderRequest(request: RawRequest): Uint8Array {
  const head = `${request.method} ${request.target} ${request.version}\r\n` +
    request.headers.map(([name, value]) => `${name}: ${value}\r\n`).join("") + "\r\n";
  const text = head + request.body;
  return Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff);
}

/** `bytes` split at the request's cut points, for separate writes. */
export function splitRequest(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const bounds = [0, ...at.filter((c) => c > 0 && c < bytes.length), bytes.length];
  const pieces: Uint8Array[] = [];
  for (let i = 1; i < bounds.length; i++) pieces.push(bytes.subarray(bounds[i - 1], bounds[i]));
  return pieces;
}

/** A string as latin1 bytes mapped back to one char per byte (for compressed bodies). */
export function bytesToLatin1(bytes: Uint8Array): string {
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return text;
}
