import assert from "node:assert/strict";
import { createDocumentRenderer } from "../../../server/page/document.ts";

const decoder = new TextDecoder();
const manifest = {
  buildId: "b",
  inputHash: "h",
  script: "/build/main-A.js",
  preload: ["/build/chunks/c-B.js"],
  styles: ["/build/main-C.css"],
};

Deno.test("createDocumentRenderer: splices the nonce into every script and preload", () => {
  const render = createDocumentRenderer(manifest, {
    title: "T",
    appHtml: "<p>page</p>",
    clientConfig: { a: 1 },
  });
  const html = decoder.decode(render({ nonce: "N0NCE", headTags: "<meta name=x>" }));
  const scripts = html.match(/<script\b[^>]*>/g) ?? [];
  const preloads = html.match(/<link rel="modulepreload"[^>]*>/g) ?? [];
  assert.equal(scripts.length, 2);
  assert.equal(preloads.length, 2);
  for (const tag of [...scripts, ...preloads]) assert.match(tag, /nonce="N0NCE"/);
  assert.ok(html.includes("<meta name=x>"));
  assert.ok(html.includes('<link rel="stylesheet" href="/build/main-C.css">'));
  assert.ok(html.includes('<script type="module" src="/build/main-A.js" nonce="N0NCE">'));
  assert.ok(html.includes('{"a":1}</script>'));
  assert.ok(html.includes('<div id="root"><p>page</p></div>'), "the page's HTML in #root");
  assert.ok(!html.includes("\0"), "no placeholder survives");
});

Deno.test("createDocumentRenderer: each call gets its own parts", () => {
  const render = createDocumentRenderer(manifest, {
    title: "T",
    appHtml: "<p>page</p>",
    clientConfig: {},
  });
  const one = decoder.decode(render({ nonce: "one", headTags: "" }));
  const two = decoder.decode(render({ nonce: "two", headTags: "" }));
  assert.ok(one.includes('nonce="one"') && !one.includes('nonce="two"'));
  assert.ok(two.includes('nonce="two"') && !two.includes('nonce="one"'));
});

Deno.test("createDocumentRenderer: the title is escaped", () => {
  const render = createDocumentRenderer(manifest, { title: "<x>&", appHtml: "", clientConfig: {} });
  const html = decoder.decode(render({ nonce: "n", headTags: "" }));
  assert.ok(html.includes("<title>&#60;x&#62;&#38;</title>"));
});

Deno.test("createDocumentRenderer: the bytes are the UTF-8 of the document, whatever the parts", () => {
  const render = createDocumentRenderer(manifest, {
    title: "Café ✓",
    appHtml: "<p>naïve 🚀</p>",
    clientConfig: { note: "ü" },
  });
  const parts = [
    { nonce: "abc+/==", headTags: "" },
    { nonce: "n", headTags: '<meta name="baggage" content="a=b">' },
    { nonce: "n", headTags: '<meta content="é🚀">' },
    { nonce: "", headTags: "x" },
    { nonce: "n", headTags: `<meta name="baggage" content="${"a=b,".repeat(80)}">` },
    { nonce: "n".repeat(70), headTags: `<meta content="${"é🚀".repeat(40)}">` },
    // The worst case per UTF-16 unit: 3 bytes (a lone surrogate becomes U+FFFD).
    { nonce: "\ud800".repeat(9), headTags: "\udfff".repeat(50) },
  ];
  for (const part of parts) {
    const bytes = render(part);
    const html = decoder.decode(bytes);
    assert.deepEqual(bytes, new TextEncoder().encode(html), "exact length, no stray bytes");
    const nonce = part.nonce.toWellFormed();
    assert.equal(html.split(`nonce="${nonce}"`).length - 1, html.split("nonce=").length - 1);
    assert.ok(html.split("nonce=").length > 2, "several places take the nonce");
    const head = part.headTags.toWellFormed();
    assert.ok(html.includes(`${head}\n<link rel="stylesheet"`));
    assert.ok(html.includes("<title>Café ✓</title>") && html.includes("<p>naïve 🚀</p>"));
    assert.ok(html.endsWith("</html>"));
  }
});
