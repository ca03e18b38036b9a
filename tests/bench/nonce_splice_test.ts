import assert from "node:assert/strict";
import { nonceSplicer } from "./nonce_splice.ts";

Deno.test("nonceSplicer: a fresh nonce wherever the original stood, in the bytes and the CSP", () => {
  const page = '<script nonce="OLD">1</script><link nonce="OLD"><p>é</p>';
  const csp = "script-src 'nonce-OLD' 'strict-dynamic'; style-src 'self' 'nonce-OLD'";
  const splice = nonceSplicer(page, csp);
  for (const nonce of ["bmV3bm9uY2UxMjM0NTY3OA==", "x"]) {
    const { body, csp: header } = splice(nonce);
    assert.equal(
      new TextDecoder().decode(body),
      `<script nonce="${nonce}">1</script><link nonce="${nonce}"><p>é</p>`,
    );
    assert.equal(body.length, new TextEncoder().encode(page.replaceAll("OLD", nonce)).length);
    assert.equal(header, csp.replaceAll("OLD", nonce));
  }
  assert.throws(() => nonceSplicer(page, "default-src 'self'"), /no nonce/);
});

Deno.test("nonceSplicer: a slot takes each request's own text, nonces around it still fresh", () => {
  const page = '<head nonce="OLD"><meta name="t" content="1"></head><p nonce="OLD">é</p>';
  const splice = nonceSplicer(page, "script-src 'nonce-OLD'", '<meta name="t" content="1">');
  for (const tags of ['<meta name="t" content="ü2">', ""]) {
    const { body } = splice("NEW", tags);
    assert.equal(
      new TextDecoder().decode(body),
      `<head nonce="NEW">${tags}</head><p nonce="NEW">é</p>`,
    );
  }
  assert.throws(() => nonceSplicer(page, "script-src 'nonce-OLD'", "<absent>"), /exactly once/);
  assert.throws(() => nonceSplicer(page, "script-src 'nonce-OLD'", "OLD"), /exactly once/);
});
