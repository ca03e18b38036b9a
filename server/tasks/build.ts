/** `deno task build`: bundle the client, render its pages; `--if-needed` skips an unchanged one. */
import * as esbuild from "esbuild";
import { build, isUpToDate } from "../build/client_build.ts";
import { writeRenderedPages } from "../page/rendered_pages.ts";
import { checkBudgets, measurePayload, readBudgets } from "../build/payload.ts";

const started = performance.now();
try {
  if (Deno.args.includes("--if-needed") && await isUpToDate()) {
    console.log("build: client is up to date");
  } else {
    const manifest = await build();
    // React picks its production build by NODE_ENV when it loads: set first, imported after.
    Deno.env.set("NODE_ENV", "production");
    const { importServerBundle, pageRef, renderPages } = await import("../page/render.ts");
    const bundle = await importServerBundle();
    await writeRenderedPages(renderPages(bundle));
    const ms = Math.round(performance.now() - started);
    console.log(`build: ${manifest.script} (build ${manifest.buildId}) in ${ms} ms`);
    // Each page module by the paths that show it, for the budgets' lines.
    const { pages, notFound, error } = bundle.pages;
    const shownAt = new Map<string, string[]>();
    for (const [path, page] of [...pages, ["(not found)", notFound], ["(error)", error]] as const) {
      const { module = "" } = pageRef(page, path, bundle.pageModules);
      shownAt.set(module, [...shownAt.get(module) ?? [], path]);
    }
    const label = (module: string) => `${module} (${shownAt.get(module)?.join(", ") ?? "no page"})`;
    const { lines } = checkBudgets(await measurePayload(), await readBudgets(), label);
    for (const line of lines) console.log(`build: ${line}`);
  }
} catch (error) {
  // esbuild printed its diagnostics already; a page that threw while rendering did not.
  if (error instanceof Error && !("errors" in error)) console.error(error.stack);
  console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
  Deno.exitCode = 1;
} finally {
  await esbuild.stop();
}
