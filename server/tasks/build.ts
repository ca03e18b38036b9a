/** `deno task build`: bundle the client, render its pages; `--if-needed` skips an unchanged one. */
import * as esbuild from "esbuild";
import { build, isUpToDate } from "../build/client_build.ts";
import { writeRenderedPages } from "../page/rendered_pages.ts";
import { SERVER_BUNDLE } from "../constants.ts";

const started = performance.now();
try {
  if (Deno.args.includes("--if-needed") && await isUpToDate()) {
    console.log("build: client is up to date");
  } else {
    const manifest = await build();
    // React picks its production build by NODE_ENV when it loads: set first, imported after.
    Deno.env.set("NODE_ENV", "production");
    const [{ renderPages }, { routes, App }, { loaders }] = await Promise.all([
      import("../page/render.ts"),
      import(new URL(`../../${SERVER_BUNDLE}`, import.meta.url).href),
      import("../loaders.ts"),
    ]);
    await writeRenderedPages(renderPages(routes, App, new Set(Object.keys(loaders))));
    const ms = Math.round(performance.now() - started);
    console.log(`build: ${manifest.script} (build ${manifest.buildId}) in ${ms} ms`);
  }
} catch (error) {
  // esbuild printed its diagnostics already; a page that threw while rendering did not.
  if (error instanceof Error && !("errors" in error)) console.error(error.stack);
  console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
  Deno.exitCode = 1;
} finally {
  await esbuild.stop();
}
