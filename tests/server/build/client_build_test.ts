import assert from "node:assert/strict";
import type { Metafile } from "esbuild";
import { manifestFromMetafile } from "../../../server/build/client_build.ts";

const metafile = {
  outputs: {
    "static/build/main-AAAA.js": {
      entryPoint: "client/main.tsx",
      cssBundle: "static/build/main-CCCC.css",
      imports: [
        { path: "static/build/chunks/chunk-BBBB.js", kind: "import-statement" },
        { path: "static/build/chunks/lazy-DDDD.js", kind: "dynamic-import" },
        { path: "https://cdn.example/x.js", kind: "import-statement", external: true },
      ],
    },
    "static/build/chunks/chunk-BBBB.js": {
      imports: [{ path: "static/build/chunks/deep-EEEE.js", kind: "import-statement" }],
    },
    "static/build/chunks/deep-EEEE.js": { imports: [] },
    "static/build/chunks/lazy-DDDD.js": { imports: [] },
    "static/build/main-CCCC.css": { imports: [] },
  },
} as unknown as Metafile;

Deno.test("manifestFromMetafile: entry, styles and static imports become URL paths", () => {
  assert.deepEqual(manifestFromMetafile(metafile, "b1", "h1"), {
    buildId: "b1",
    inputHash: "h1",
    script: "/build/main-AAAA.js",
    preload: ["/build/chunks/chunk-BBBB.js", "/build/chunks/deep-EEEE.js"],
    styles: ["/build/main-CCCC.css"],
  });
});
