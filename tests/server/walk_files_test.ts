import assert from "node:assert/strict";
import { listFiles } from "../../server/walk_files.ts";

Deno.test("listFiles: regular files at any depth, relative to the root, no links", async () => {
  const root = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${root}/a/b`, { recursive: true });
    await Deno.writeTextFile(`${root}/top.txt`, "1");
    await Deno.writeTextFile(`${root}/a/b/deep.js`, "2");
    await Deno.writeTextFile(`${root}/.hidden`, "3");
    await Deno.symlink("/etc/hostname", `${root}/a/link`);
    assert.deepEqual((await listFiles(root)).sort(), [".hidden", "a/b/deep.js", "top.txt"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("listFiles: a missing root has no files", async () => {
  assert.deepEqual(await listFiles("/nonexistent/for/this/test"), []);
});
