/** The error page `deno task dev` serves while the server cannot start, without a network. */
import assert from "node:assert/strict";
import { createFallbackApp, formatLocation } from "../../../server/dev/fallback_page.ts";

const FAILURE = {
  text: 'Error: <img src=x onerror="alert(1)">',
  file: "client/App.tsx",
  line: 10,
  column: 3,
  lineText: "  throw new Error(x);",
  stack: "at App (client/App.tsx:10:3)",
};

Deno.test("every page is the error, escaped, with the dev client under a nonce CSP", async () => {
  const { handler, close } = createFallbackApp(FAILURE);
  for (const path of ["/", "/deep/page?q=<x>", "/build/main.js"]) {
    const res = await handler(new Request(`http://localhost${path}`));
    const html = await res.text();
    assert.equal(res.status, 500);
    assert.equal(res.headers.get("cache-control"), "no-store");
    const nonce = /script-src 'nonce-([^']+)'/.exec(res.headers.get("content-security-policy")!)
      ?.[1];
    assert.ok(nonce);
    assert.match(html, new RegExp(`<script type="module" src="/_dev/client.js" nonce="${nonce}">`));
    assert.match(html, /client\/App\.tsx:10:3/);
    assert.match(html, /Error: &#60;img src=x onerror=&#34;alert\(1\)&#34;&#62;/);
    assert.doesNotMatch(html, /<img/);
  }
  // Deno.serve drops a HEAD answer's body itself; the handler answers HEAD like GET.
  const head = await handler(new Request("http://localhost/", { method: "HEAD" }));
  assert.equal(head.status, 500);
  await head.body?.cancel();
  const post = await handler(new Request("http://localhost/monitoring", { method: "POST" }));
  assert.equal(post.status, 503);
  assert.match(await post.text(), /^The dev server is not running: Error: /);
  close();
});

Deno.test("/_dev/reload says hello, then the server error; /_dev/client.js is served", async () => {
  const { handler, close } = createFallbackApp(FAILURE);
  const res = await handler(new Request("http://localhost/_dev/reload"));
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("event: server-error")) text += (await reader.read()).value ?? "";
  assert.match(text, /event: hello\n/);
  assert.match(text, /event: server-error\ndata: \{"errors":\[\{"text":"Error: <img/);
  await reader.cancel();
  close();
  const client = await handler(new Request("http://localhost/_dev/client.js"));
  assert.match(await client.text(), /EventSource\("\/_dev\/reload"\)/);
});

Deno.test("formatLocation: file:line:column, or nothing without a file", () => {
  assert.equal(formatLocation(FAILURE), "client/App.tsx:10:3");
  assert.equal(formatLocation({ text: "x", file: "a.ts", line: 2 }), "a.ts:2");
  assert.equal(formatLocation({ text: "x" }), "");
});
