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
