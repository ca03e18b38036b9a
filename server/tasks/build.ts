/**
 * `deno task build`: build the client for production (server/build/client_build.ts), render
 * its pages to HTML for the server (server/page/render.ts). With `--if-needed` (what `start`,
 * `test` and `bench` run first) it skips a build whose inputs are unchanged since the last one.
 */
import * as esbuild from "esbuild";
import { build, isUpToDate } from "../build/client_build.ts";
import { type RenderedPages, writeRenderedPages } from "../page/rendered_pages.ts";

/**
 * The pages as the production server would have rendered them: React's production build, which
 * React picks by NODE_ENV when it is imported, so the render modules load after it is set.
 */
async function renderForProduction(): Promise<RenderedPages> {
  Deno.env.set("NODE_ENV", "production");
  const [{ renderPages }, { routes }] = await Promise.all([
    import("../page/render.ts"),
    import("../../client/routes.tsx"),
  ]);
  return renderPages(routes);
}

if (import.meta.main) {
  const ifNeeded = Deno.args.includes("--if-needed");
  const started = performance.now();
  try {
    if (ifNeeded && await isUpToDate("production")) {
      console.log("build: client is up to date");
    } else {
      const manifest = await build("production");
      await writeRenderedPages(await renderForProduction());
      const ms = Math.round(performance.now() - started);
      console.log(`build: ${manifest.script} (build ${manifest.buildId}) in ${ms} ms`);
    }
  } catch (error) {
    // esbuild has already printed its diagnostics with file and line; a page that throws while
    // rendering has not, so its stack (file and line) is printed.
    const fromEsbuild = error instanceof Error && "errors" in error;
    if (!fromEsbuild && error instanceof Error && error.stack) console.error(error.stack);
    console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
    Deno.exitCode = 1;
  } finally {
    await esbuild.stop();
  }
}
