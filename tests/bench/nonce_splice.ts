/**
 * For the baselines: a page and its CSP header, taken from one real answer of the app, cut around
 * that answer's nonce (and, for the SDK reference, around its trace tags), so fresh ones can be
 * put back per request.
 */

/**
 * Build a function that writes a nonce into the page (as bytes, from segments encoded once) and
 * into the CSP header, wherever the original nonce stood; and, when the page was cut at `slot`
 * (text it holds once), the request's own text there instead.
 *
 * @example
 * const splice = nonceSplicer(html, csp); const { body, csp: header } = splice("bm9uY2U=");
 */
export function nonceSplicer(
  page: string,
  csp: string,
  slot?: string,
): (nonce: string, slotText?: string) => { body: Uint8Array<ArrayBuffer>; csp: string } {
  const original = /'nonce-([^']+)'/.exec(csp)?.[1];
  if (original === undefined) throw new Error("the CSP header carries no nonce");
  const halves = slot === undefined ? [page] : page.split(slot);
  if (halves.length > 2 || (slot !== undefined && halves.length < 2)) {
    throw new Error("the page must hold the slot exactly once");
  }
  const encoder = new TextEncoder();
  // Each half as its segments between nonces; the slot's text goes between the halves.
  const parts = halves.map((half) => half.split(original).map((text) => encoder.encode(text)));
  const fixedLength = parts.flat().reduce((sum, s) => sum + s.length, 0);
  const slots = parts.flat().length - parts.length;
  const cspParts = csp.split(original);
  return (nonce, slotText = "") => {
    const extra = encoder.encode(slotText);
    const body = new Uint8Array(fixedLength + slots * nonce.length + extra.length);
    let at = 0;
    parts.forEach((segments, half) => {
      if (half > 0) {
        body.set(extra, at);
        at += extra.length;
      }
      body.set(segments[0], at);
      at += segments[0].length;
      for (let i = 1; i < segments.length; i++) {
        // A base64 nonce is ASCII: one byte per code unit.
        for (let j = 0; j < nonce.length; j++) body[at + j] = nonce.charCodeAt(j);
        at += nonce.length;
        body.set(segments[i], at);
        at += segments[i].length;
      }
    });
    return { body, csp: cspParts.join(nonce) };
  };
}
