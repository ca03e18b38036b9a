/**
 * `deno task build`: build the client for production (server/build/client_build.ts) and render
 * its pages to HTML for the server. With `--if-needed` (what `start`, `test` and `bench` run
 * first) it skips a build whose inputs are unchanged since the last one.
 */
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
    // Pages with a loader render per request, with their data.
    await writeRenderedPages(renderPages(routes, App, new Set(Object.keys(loaders))));
    const ms = Math.round(performance.now() - started);
    console.log(`build: ${manifest.script} (build ${manifest.buildId}) in ${ms} ms`);
  }
} catch (error) {
  // esbuild has printed its diagnostics with file and line; a page that throws while rendering
  // has not, so its stack is printed.
  if (error instanceof Error && !("errors" in error)) console.error(error.stack);
  console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
  Deno.exitCode = 1;
} finally {
  await esbuild.stop();
}
