import assert from "node:assert/strict";
import { pageNonce } from "../../client/page_nonce.ts";

Deno.test("pageNonce: the nonce property of the page's first script with one, else empty", () => {
  const selectors: string[] = [];
  const page = (script: { nonce: string; getAttribute?: () => string } | null) =>
    ({
      querySelector: (selector: string) => (selectors.push(selector), script),
    }) as unknown as Document;
  // Browsers empty the attribute once the page has loaded; the property keeps the value.
  assert.equal(pageNonce(page({ nonce: "abc123", getAttribute: () => "" })), "abc123");
  assert.equal(pageNonce(page(null)), "");
  assert.deepEqual(selectors, ["script[nonce]", "script[nonce]"]);
});
