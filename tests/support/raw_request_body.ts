/**
 * Generators for the body of a hostile request and the headers that frame it: junk or
 * envelope-like payloads, Content-Length right, wrong or malformed, and chunked encodings.
 */
import fc from "fast-check";
import type { RequestSpace } from "./raw_request.ts";
import { CONTENT_LENGTHS, latin1Char, TRANSFER_ENCODINGS } from "./raw_request_words.ts";

/** Sent bodies: junk, envelope-like text for near-miss DSNs, or compressed envelopes. */
function payloadArbitrary(space: RequestSpace): fc.Arbitrary<Framed> {
  const junk = fc.string({ unit: latin1Char(), maxLength: 200 });
  const plain = junk.map((body) => ({ body, headers: [] as [string, string][] }));
  const envelope = fc.tuple(fc.constantFrom(...space.nearMissDsns), junk).map(([dsn, rest]) => ({
    body: `${JSON.stringify({ dsn })}\n${rest}`,
    headers: [] as [string, string][],
  }));
  const parts: fc.Arbitrary<Framed>[] = [plain, envelope];
  if (space.compressedBodies.length > 0) {
    parts.push(
      fc.constantFrom(...space.compressedBodies).map(({ encoding, body }) => ({
        body,
        headers: [["Content-Encoding", encoding]] as [string, string][],
      })),
    );
  }
  return fc.oneof({ withCrossShrink: true }, ...parts);
}

/** A body and the headers that frame it. */
export type Framed = { body: string; headers: [string, string][] };

/** How the body is framed: no length, a length (right, wrong, odd, repeated) or chunked. */
export function framedBodyArbitrary(space: RequestSpace): fc.Arbitrary<Framed> {
  return payloadArbitrary(space).chain(({ body, headers }): fc.Arbitrary<Framed> => {
    const framed = (...extra: [string, string][]): Framed => ({
      body,
      headers: [...headers, ...extra],
    });
    return fc.oneof(
      { withCrossShrink: true },
      fc.constant(framed()),
      fc.constant(framed(cl(body.length))),
      fc.integer({ min: -3, max: 3 }).map((delta) => framed(cl(Math.max(0, body.length + delta)))),
      fc.constantFrom(...CONTENT_LENGTHS).map((value) => framed(["Content-Length", value])),
      fc.integer({ min: -2, max: 2 }).map((delta) =>
        framed(cl(body.length), cl(Math.max(0, body.length + delta)))
      ),
      chunkedArbitrary(body).map(({ encoded, te, withLength }) => ({
        body: encoded,
        headers: [
          ...headers,
          ["Transfer-Encoding", te] as [string, string],
          ...(withLength ? [cl(body.length)] : []),
        ],
      })),
    );
  });
}

/** A chunked encoding of `body`: sizes, hex spelling, extensions, trailers, bad sizes. */
function chunkedArbitrary(
  body: string,
): fc.Arbitrary<{ encoded: string; te: string; withLength: boolean }> {
  return fc.record({
    cuts: fc.array(fc.nat({ max: Math.max(0, body.length) }), { maxLength: 4 }),
    upper: fc.boolean(),
    zeros: fc.nat({ max: 3 }),
    extension: fc.constantFrom("", ";a=b", ";x", '; q="a;b"', ";" + "e".repeat(100)),
    badSize: fc.option(fc.constantFrom("zz", "-1", "ffffffffffffffffff", "", " 1", "0x1"), {
      freq: 6,
    }),
    trailer: fc.constantFrom("", "X-T: 1\r\n", "Content-Length: 5\r\n"),
    terminated: fc.boolean(),
    te: fc.oneof(
      { withCrossShrink: true },
      { weight: 4, arbitrary: fc.constant("chunked") },
      { weight: 1, arbitrary: fc.constantFrom(...TRANSFER_ENCODINGS) },
    ),
    withLength: fc.boolean(),
  }).map((c) => {
    const bounds = [...new Set([0, ...c.cuts, body.length])].sort((a, b) => a - b);
    let encoded = "";
    for (let i = 1; i < bounds.length; i++) {
      const piece = body.slice(bounds[i - 1], bounds[i]);
      let size = "0".repeat(c.zeros) + piece.length.toString(16);
      if (c.upper) size = size.toUpperCase();
      if (c.badSize !== null && i === 1) size = c.badSize;
      encoded += `${size}${c.extension}\r\n${piece}\r\n`;
    }
    if (c.terminated) encoded += `0${c.extension}\r\n${c.trailer}\r\n`;
    return { encoded, te: c.te, withLength: c.withLength };
  });
}

function cl(n: number): [string, string] {
  return ["Content-Length", String(n)];
}
