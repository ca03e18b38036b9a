/**
 * `deno task build`: build the client for production (server/build/client_build.ts). With
 * `--if-needed` (what `start`, `test` and `bench` run first) it skips a build whose inputs are
 * unchanged since the last one.
 */
import * as esbuild from "esbuild";
import { build, isUpToDate } from "../build/client_build.ts";

if (import.meta.main) {
  const ifNeeded = Deno.args.includes("--if-needed");
  const started = performance.now();
  try {
    if (ifNeeded && await isUpToDate("production")) {
      console.log("build: client is up to date");
    } else {
      const manifest = await build("production");
      const ms = Math.round(performance.now() - started);
      console.log(`build: ${manifest.script} (build ${manifest.buildId}) in ${ms} ms`);
    }
  } catch (error) {
    // esbuild has already printed its diagnostics with file and line.
    console.error(`build failed: ${error instanceof Error ? error.message.split("\n")[0] : error}`);
    Deno.exitCode = 1;
  } finally {
    await esbuild.stop();
  }
}
