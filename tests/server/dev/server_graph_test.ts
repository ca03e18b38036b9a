/** Which saves restart the dev server, and the server's files read from `deno info`. */
import assert from "node:assert/strict";
import { needsRestart, projectFiles, serverModuleFiles } from "../../../server/dev/server_graph.ts";

Deno.test("needsRestart: main.ts, server scripts, and client files the server imports", () => {
  const graph = new Set(["client/App.tsx", "main.ts", "server/http/app.ts"]);
  for (const path of ["main.ts", "server/http/app.ts", "server/new_module.ts", "client/App.tsx"]) {
    assert.equal(needsRestart([path], graph), true, path);
  }
  for (const path of ["client/main.tsx", "client/styles.css", "server/.app.ts.swp", "server/x~"]) {
    assert.equal(needsRestart([path], graph), false, path);
  }
  assert.equal(needsRestart(["client/styles.css", "server/http/app.ts"], graph), true);
});

Deno.test("projectFiles keeps the project's own modules only; junk reads as none", () => {
  const info = JSON.stringify({
    modules: [
      { specifier: "file:///p/main.ts" },
      { specifier: "file:///p/client/App.tsx", error: "SyntaxError" },
      { specifier: "file:///p/node_modules/react/index.js" },
      { specifier: "npm:react@19.3.1" },
      { specifier: "file:///elsewhere/x.ts" },
      { nothing: true },
    ],
  });
  assert.deepEqual(projectFiles(info, "file:///p/"), new Set(["main.ts", "client/App.tsx"]));
  assert.deepEqual(projectFiles("not json", "file:///p/"), new Set());
  assert.deepEqual(projectFiles('{"modules":{}}', "file:///p/"), new Set());
});

Deno.test("serverModuleFiles: the dev server's graph includes what renders the pages", async () => {
  const files = await serverModuleFiles(`file://${Deno.cwd()}/`);
  assert.ok(files.has("client/App.tsx"), [...files].join(" "));
  assert.ok(files.has("client/routes.tsx"));
  assert.ok(files.has("server/page/render.ts"));
  assert.ok(files.has("server/http/app.ts"));
  assert.ok(!files.has("client/main.tsx"));
});

Deno.test("serverModuleFiles: main.ts alone loads neither React nor the app's components", async () => {
  const files = await serverModuleFiles(`file://${Deno.cwd()}/`, ["main.ts"]);
  assert.ok(files.has("server/http/app.ts"));
  assert.ok(!files.has("client/App.tsx"), [...files].join(" "));
  assert.ok(!files.has("server/page/render.ts"));
});
