import assert from "node:assert/strict";
import { escapeHtml, serializeJson } from "../../../server/http/html.ts";

Deno.test("serializeJson: cannot close the script element or open a comment", () => {
  const text = serializeJson({ s: "</script><!-- \u2028 & >" });
  assert.ok(!text.includes("<") && !text.includes(">") && !text.includes("\u2028"));
  assert.deepEqual(JSON.parse(text), { s: "</script><!-- \u2028 & >" });
});

Deno.test("escapeHtml: escapes the five special characters", () => {
  assert.equal(
    escapeHtml(`<a href="x">'&'</a>`),
    "&#60;a href=&#34;x&#34;&#62;&#39;&#38;&#39;&#60;/a&#62;",
  );
});
