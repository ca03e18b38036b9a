import assert from "node:assert/strict";
import { readClientConfig } from "../../client/config.ts";

function page(text: string | undefined) {
  return {
    getElementById: (id: string) =>
      id === "app-config" && text !== undefined ? { textContent: text } : null,
  } as unknown as Document;
}

Deno.test("readClientConfig: the page's settings, or none when missing or broken", () => {
  assert.deepEqual(readClientConfig(page('{"public":{"PUBLIC_A":"1"}}')), {
    public: { PUBLIC_A: "1" },
  });
  assert.deepEqual(readClientConfig(page(undefined)), {});
  assert.deepEqual(readClientConfig(page("{broken")), {});
  assert.deepEqual(readClientConfig(page("42")), {});
});
