import assert from "node:assert/strict";
import { readBuildFile } from "../../../server/build/manifest.ts";

Deno.test("readBuildFile: the file's text, or a one-line reason to run the build", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/.manifest.json`, "{}\n");
    assert.equal(await readBuildFile(`${dir}/.manifest.json`), "{}\n");
    await assert.rejects(
      readBuildFile(`${dir}/.pages.json`),
      (error: Error) =>
        /^\S+\.pages\.json is missing: run `deno task build` first$/.test(error.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
