import assert from "node:assert/strict";
import {
  addDebugIdToSourceMap,
  debugIdFor,
  injectDebugId,
} from "../../../server/build/debug_ids.ts";

Deno.test("debugIdFor: a deterministic v4-shaped UUID per content", async () => {
  const a = await debugIdFor(new TextEncoder().encode("a"));
  assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(await debugIdFor(new TextEncoder().encode("a")), a);
  assert.notEqual(await debugIdFor(new TextEncoder().encode("b")), a);
});

Deno.test("injectDebugId: registers the id under the file's stack and adds the comment", () => {
  const id = "0fa7ebf5-689b-4eef-86cd-1f5fda9e86bd";
  const code = injectDebugId("var x=1;", id);
  assert.ok(code.startsWith("var x=1;\n"), "existing lines and columns are untouched");
  assert.ok(code.endsWith(`//# debugId=${id}\n`));
  assert.equal(injectDebugId(code, id), code, "injecting twice changes nothing");
  const scope: { _sentryDebugIds?: Record<string, string> } = {};
  new Function("globalThis", code)(scope);
  const entries = Object.entries(scope._sentryDebugIds ?? {});
  assert.equal(entries.length, 1);
  assert.equal(entries[0][1], id);
  assert.match(entries[0][0], /Error/);
});

Deno.test("addDebugIdToSourceMap: keeps the map and adds the id", () => {
  const map = JSON.parse(addDebugIdToSourceMap('{"version":3,"mappings":"AAAA"}', "id-1"));
  assert.equal(map.version, 3);
  assert.equal(map.mappings, "AAAA");
  assert.equal(map.debugId, "id-1");
});
