/** `deno task build`: bundle the client, render its pages; `--if-needed` skips an unchanged one. */
import * as esbuild from "esbuild";
import { build, isUpToDate } from "../build/client_build.ts";
import { writeRenderedPages } from "../page/rendered_pages.ts";
import { STATIC_DIR } from "../constants.ts";

const started = performance.now();
try {
  if (Deno.args.includes("--if-needed") && await isUpToDate()) {
    console.log("build: client is up to date");
  } else {
    const manifest = await build();
    // React picks its production build by NODE_ENV when it loads: set first, imported after.
    Deno.env.set("NODE_ENV", "production");
    const { importServerBundle, renderPages } = await import("../page/render.ts");
    await writeRenderedPages(renderPages(await importServerBundle()));
    const ms = Math.round(performance.now() - started);
    console.log(`build: ${manifest.script} (build ${manifest.buildId}) in ${ms} ms`);
    // deno.json's budget for each page's own JavaScript (gzip), which tests/payload_test.ts holds.
    const budget = JSON.parse(await Deno.readTextFile("deno.json")).budgets?.page * 1024;
    if (!(budget > 0)) throw new Error('deno.json: "budgets.page" must be a number of KB');
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
    for (const [module, { script, preload }] of Object.entries(manifest.pages)) {
      const sizes = [script, ...preload].map((url) =>
        Deno.stat(`${STATIC_DIR}${url}.gz`).catch(() => Deno.stat(`${STATIC_DIR}${url}`))
      );
      const bytes = (await Promise.all(sizes)).reduce((sum, { size }) => sum + size, 0);
      const left = `${kb(Math.abs(budget - bytes))} ${bytes > budget ? "OVER" : "under"}`;
      console.log(`build: page ${module}: ${kb(bytes)} gzip, ${left} its ${kb(budget)} budget`);
    }
  }
} catch (error) {
  // esbuild printed its diagnostics already; a page that threw while rendering did not.
  if (error instanceof Error && !("errors" in error)) console.error(error.stack);
  console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
  Deno.exitCode = 1;
} finally {
  await esbuild.stop();
}
