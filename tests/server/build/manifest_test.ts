import assert from "node:assert/strict";
import { manifestFromMetafile, validateManifest } from "../../../server/build/manifest.ts";

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
};
const options = {
  entryPoint: "client/main.tsx",
  staticDir: "static",
  buildId: "b1",
  inputHash: "h1",
};

Deno.test("manifestFromMetafile: entry, styles and static imports become URL paths", () => {
  assert.deepEqual(manifestFromMetafile(metafile, options), {
    buildId: "b1",
    inputHash: "h1",
    script: "/build/main-AAAA.js",
    preload: ["/build/chunks/chunk-BBBB.js", "/build/chunks/deep-EEEE.js"],
    styles: ["/build/main-CCCC.css"],
  });
});

Deno.test("manifestFromMetafile: a missing entry point is an error", () => {
  assert.throws(
    () => manifestFromMetafile(metafile, { ...options, entryPoint: "client/other.tsx" }),
    /no output for client\/other.tsx/,
  );
});

Deno.test("manifestFromMetafile: outputs outside the static folder are an error", () => {
  assert.throws(
    () => manifestFromMetafile(metafile, { ...options, staticDir: "public" }),
    /outside public/,
  );
});

Deno.test("validateManifest: accepts a manifest and rejects anything else", () => {
  const good = manifestFromMetafile(metafile, options);
  assert.deepEqual(validateManifest(JSON.parse(JSON.stringify(good))), good);
  for (const bad of [null, 1, {}, { ...good, script: 1 }, { ...good, preload: [1] }]) {
    assert.throws(() => validateManifest(bad), /not a valid manifest/);
  }
});
