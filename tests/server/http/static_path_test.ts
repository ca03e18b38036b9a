import assert from "node:assert/strict";
import { resolveStaticPath } from "../../../server/http/static_path.ts";

Deno.test("resolveStaticPath: plain paths map to relative file paths", () => {
  assert.equal(resolveStaticPath("/robots.txt"), "robots.txt");
  assert.equal(resolveStaticPath("/build/main-AB12.js"), "build/main-AB12.js");
  assert.equal(resolveStaticPath("/build/chunks/x-1.js"), "build/chunks/x-1.js");
  assert.equal(resolveStaticPath("/a%20b.txt"), "a b.txt");
});

const refused = [
  "/",
  "/build/",
  "/../deno.json",
  "/build/../../deno.json",
  "/%2e%2e/deno.json",
  "/%2E%2E/%2E%2E/etc/passwd",
  "/build/%2e%2e/%2e%2e/main.ts",
  "/..%2fdeno.json",
  "/build%2F..%2F..%2Fmain.ts",
  "/..%5cdeno.json",
  "/..\\deno.json",
  "/build\\..\\..\\main.ts",
  "/robots.txt%00.js",
  "/robots.txt\0",
  "//etc/passwd",
  "/C:/Windows/win.ini",
  "/./robots.txt",
  "/build//main.js",
  "/.env",
  "/build/.manifest.json",
  "/%",
  "/%zz",
  "/%c0%ae%c0%ae/deno.json",
  "relative/path",
];
for (const path of refused) {
  Deno.test(`resolveStaticPath: refuses ${JSON.stringify(path)}`, () => {
    assert.equal(resolveStaticPath(path), null);
  });
}
