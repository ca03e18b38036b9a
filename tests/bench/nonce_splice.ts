/**
 * For the identical-response baseline: a page and its CSP header, taken from one real answer
 * of the app, cut around that answer's nonce, so a fresh nonce can be put back per request.
 */

/**
 * Build a function that writes a nonce into the page (as bytes, from segments encoded once)
 * and into the CSP header, wherever the original nonce stood.
 *
 * @example
 * const splice = nonceSplicer(html, csp); const { body, csp: header } = splice("bm9uY2U=");
 */
export function nonceSplicer(
  page: string,
  csp: string,
): (nonce: string) => { body: Uint8Array<ArrayBuffer>; csp: string } {
  const original = /'nonce-([^']+)'/.exec(csp)?.[1];
  if (original === undefined) throw new Error("the CSP header carries no nonce");
  const encoder = new TextEncoder();
  const segments = page.split(original).map((text) => encoder.encode(text));
  const cspParts = csp.split(original);
  const fixedLength = segments.reduce((sum, s) => sum + s.length, 0);
  const slots = segments.length - 1;
  return (nonce) => {
    const body = new Uint8Array(fixedLength + slots * nonce.length);
    body.set(segments[0]);
    let at = segments[0].length;
    for (let i = 1; i < segments.length; i++) {
      // A base64 nonce is ASCII: one byte per code unit.
      for (let j = 0; j < nonce.length; j++) body[at + j] = nonce.charCodeAt(j);
      at += nonce.length;
      body.set(segments[i], at);
      at += segments[i].length;
    }
    return { body, csp: cspParts.join(nonce) };
  };
}
