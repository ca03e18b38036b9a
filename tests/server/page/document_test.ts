import assert from "node:assert/strict";
import { documentShell } from "../../../server/page/document.ts";
import type { RenderedPage } from "../../../server/page/rendered_pages.ts";

const manifest = {
  buildId: "b",
  inputHash: "h",
  script: "/build/main-A.js",
  preload: ["/build/chunks/c-B.js"],
  styles: ["/build/main-C.css"],
  replayWorker: "/build/replay-worker-D.js",
  pages: {
    "client/pages/a.tsx": {
      script: "/build/a-E.js",
      preload: ["/build/chunks/only-a-F.js"],
      styles: ["/build/a-G.css"],
    },
  },
};

function render(
  page: Omit<RenderedPage, "appHtml">,
  parts = { nonce: "N0NCE", headTags: "" },
  data?: unknown,
) {
  const { start, end } = documentShell(manifest, page, { clientConfig: { a: 1 } })(parts);
  return start + "<p>page</p>" + end(data);
}

Deno.test("documentShell: the nonce on every script and preload, the page's HTML in #root", () => {
  const html = render({ title: "T" }, { nonce: "N0NCE", headTags: "<meta name=x>" });
  const scripts = html.match(/<script\b[^>]*>/g) ?? [];
  const preloads = html.match(/<link rel="modulepreload"[^>]*>/g) ?? [];
  assert.equal(scripts.length, 2);
  assert.equal(preloads.length, 2);
  for (const tag of [...scripts, ...preloads]) assert.match(tag, /nonce="N0NCE"/);
  assert.ok(html.includes("<meta name=x>"));
  assert.ok(html.includes('<link rel="stylesheet" href="/build/main-C.css">'));
  assert.ok(html.includes('<script type="module" src="/build/main-A.js" nonce="N0NCE">'));
  assert.ok(html.includes('{"a":1}</script>'));
  assert.ok(html.includes('<div id="root"><p>page</p></div>'), "nothing else in #root");
  assert.ok(!html.includes("\0"), "no placeholder survives");
  assert.ok(!html.includes('id="page-data"'), "no data without a loader");
});

Deno.test("documentShell: each request gets its own parts", () => {
  const one = render({ title: "T" }, { nonce: "one", headTags: "" });
  const two = render({ title: "T" }, { nonce: "two", headTags: "" });
  assert.ok(one.includes('nonce="one"') && !one.includes('nonce="two"'));
  assert.ok(two.includes('nonce="two"') && !two.includes('nonce="one"'));
});

Deno.test("documentShell: title, description and meta tags, escaped", () => {
  const html = render({
    title: "<x>&",
    description: 'say "hi"',
    meta: { "og:title": "<b>", robots: "noindex" },
  });
  assert.ok(html.includes("<title>&#60;x&#62;&#38;</title>"));
  assert.ok(html.includes('<meta name="description" content="say &#34;hi&#34;">'));
  assert.ok(html.includes('<meta name="og:title" content="&#60;b&#62;">'));
  assert.ok(html.includes('<meta name="robots" content="noindex">'));
});

Deno.test("documentShell: a loader's data as JSON after #root, never executable", () => {
  const data = { quote: "</script><script>alert(1)</script>", n: 1 };
  const html = render({ title: "T" }, undefined, data);
  const json = /<script type="application\/json" id="page-data" nonce="N0NCE">(.*?)<\/script>/
    .exec(html)?.[1];
  assert.ok(json, html);
  assert.deepEqual(JSON.parse(json), data);
  assert.equal((html.match(/<script/g) ?? []).length, 3, "the data opened no script of its own");
});

Deno.test("documentShell: a page's own chunk, the chunks only it imports and its styles; #root names it", () => {
  const html = render({ title: "A", module: "client/pages/a.tsx", component: "APage" });
  const preloads = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(preloads, [
    "/build/main-A.js",
    "/build/chunks/c-B.js",
    "/build/a-E.js",
    "/build/chunks/only-a-F.js",
  ]);
  const styles = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(styles, ["/build/main-C.css", "/build/a-G.css"]);
  assert.ok(html.includes('<div id="root" data-page="/build/a-E.js" data-component="APage">'));
  assert.ok(render({ title: "P", module: "__proto__" }).includes('<div id="root">'));
});
