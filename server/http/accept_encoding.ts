/**
 * Content negotiation for precompressed static files.
 */

/** Encodings the build writes beside a file, best first. */
export type Encoding = "br" | "gzip";

const PREFERENCE: readonly Encoding[] = ["br", "gzip"];

/**
 * Pick the best encoding the client accepts among those available, or `null` for identity.
 * Honours `q` values, `q=0` refusals and `*`.
 *
 * @example
 * negotiateEncoding("gzip, deflate, br", ["br", "gzip"]); // "br"
 * negotiateEncoding("br;q=0, gzip", ["br", "gzip"]);       // "gzip"
 */
export function negotiateEncoding(
  acceptEncoding: string | null,
  available: readonly Encoding[],
): Encoding | null {
  if (!acceptEncoding || available.length === 0) return null;
  const weights = parseAcceptEncoding(acceptEncoding);
  let best: Encoding | null = null;
  let bestWeight = 0;
  for (const encoding of PREFERENCE) {
    if (!available.includes(encoding)) continue;
    const weight = weights.get(encoding) ?? weights.get("*") ?? 0;
    if (weight > bestWeight) {
      best = encoding;
      bestWeight = weight;
    }
  }
  return best;
}

/** Parse `Accept-Encoding` into lower-case coding -> q value (malformed q counts as 0). */
export function parseAcceptEncoding(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const part of header.split(",")) {
    const [coding, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    if (!coding) continue;
    let q = 1;
    for (const param of params) {
      const match = /^q=([01](?:\.\d{0,3})?)$/.exec(param);
      if (param.startsWith("q=")) q = match ? Math.min(1, Number(match[1])) : 0;
    }
    // x-gzip is gzip's old name (RFC 9110, 8.4.1.3).
    weights.set(coding === "x-gzip" ? "gzip" : coding, q);
  }
  return weights;
}
