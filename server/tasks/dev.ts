/**
 * `deno task dev`: the client rebuilt on every change, the server restarted on every server
 * change, and the open page reloaded after either. It never dies of an error in the project.
 *
 * - client/ is watched here. Each change rebuilds with esbuild's incremental context
 *   (unminified, linked source maps), then writes the build status file that the server
 *   watches (server/dev/reload.ts): a good build is swapped in and the page reloads; a broken
 *   one is printed here and drawn over the page, and the next good one clears it.
 * - The server is a child process this runner owns (server/dev/supervisor.ts), restarted when
 *   main.ts, server/ or a client file it imports (client/App.tsx) changes. When it cannot start
 *   or stops on its own, the runner answers on its port with the error (file, line, message)
 *   and keeps `/_dev/reload` up, until the next save starts it again.
 */
import * as esbuild from "esbuild";
import { buildOptions, finishBuild, hashInputs } from "../build/client_build.ts";
import { BUILD_DIR, MANIFEST_FILE } from "../constants.ts";
import { listFiles } from "../walk_files.ts";
import { type BuildStatus, toBuildError, writeBuildStatus } from "../dev/reload.ts";
import { needsRestart, serverModuleFiles } from "../dev/server_graph.ts";
import { DevSupervisor } from "../dev/supervisor.ts";
import { onStopRequest } from "../lifecycle/shutdown.ts";

// What the runner watches: the client (rebuilt), and the server's entry and modules (restarted).
const WATCHED = ["client", "server", "main.ts"];
// Editors save in bursts (write, rename, chmod): wait for the burst to end before building.
const DEBOUNCE_MS = 40;

/** esbuild's incremental build of client/, writing the manifest and the status file. */
class DevBuilder {
  readonly #context: esbuild.BuildContext;
  // Larger than any earlier run's, so a server that read an old status file sees the new ones.
  #seq = Date.now();

  private constructor(context: esbuild.BuildContext) {
    this.#context = context;
  }

  static async create(): Promise<DevBuilder> {
    await Deno.mkdir(BUILD_DIR, { recursive: true });
    return new DevBuilder(await esbuild.context(buildOptions("development")));
  }

  /** Build once; the outcome is also written to the status file. */
  async build(): Promise<BuildStatus> {
    const started = performance.now();
    let status: BuildStatus;
    try {
      const result = await this.#context.rebuild();
      const manifest = await finishBuild(
        result.metafile!,
        await hashInputs("development"),
        false,
      );
      await removeStaleOutputs(result.metafile!);
      status = { seq: ++this.#seq, ok: true, buildId: manifest.buildId };
      const ms = Math.round(performance.now() - started);
      console.log(`dev: client built in ${ms} ms (build ${manifest.buildId})`);
    } catch (error) {
      // esbuild has already printed each error with its file and line.
      const errors = isBuildFailure(error)
        ? error.errors.map(toBuildError)
        : [{ text: error instanceof Error ? error.message : String(error) }];
      status = { seq: ++this.#seq, ok: false, errors };
      console.error(`dev: client build failed (${errors.length}); the page shows it until fixed`);
    }
    await writeBuildStatus(status);
    return status;
  }

  async dispose(): Promise<void> {
    await this.#context.dispose();
    await esbuild.stop();
  }
}

function isBuildFailure(error: unknown): error is esbuild.BuildFailure {
  return error instanceof Error && Array.isArray((error as esbuild.BuildFailure).errors);
}

// Every build writes new hashed names; delete the previous ones (and any production build's
// compressed copies) so static/ holds one build. Dot files (manifest, status) stay.
async function removeStaleOutputs(metafile: esbuild.Metafile): Promise<void> {
  const keep = new Set(Object.keys(metafile.outputs));
  for (const file of await listFiles(BUILD_DIR)) {
    const path = `${BUILD_DIR}/${file}`;
    if (file.split("/").some((part) => part.startsWith("."))) continue;
    if (!keep.has(path)) await Deno.remove(path).catch(() => {});
  }
}

/**
 * Call `onChange` once per burst of changes under `paths`, with the changed files relative to
 * the working directory, never twice at the same time (changes during a run are passed to one
 * more run). Returns a function that stops watching.
 */
function watchPaths(
  paths: readonly string[],
  onChange: (changed: ReadonlySet<string>) => Promise<void>,
): () => void {
  const watcher = Deno.watchFs([...paths], { recursive: true });
  const cwd = `${Deno.cwd()}/`;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let pending = new Set<string>();
  const run = async () => {
    if (running) return;
    while (pending.size > 0) {
      const changed = pending;
      pending = new Set();
      running = onChange(changed);
      await running.catch((error) => console.error("dev:", error));
    }
    running = undefined;
  };
  (async () => {
    for await (const event of watcher) {
      if (event.kind === "access") continue;
      for (const path of event.paths) {
        pending.add(path.startsWith(cwd) ? path.slice(cwd.length) : path);
      }
      clearTimeout(timer);
      timer = setTimeout(run, DEBOUNCE_MS);
    }
  })();
  return () => {
    clearTimeout(timer);
    watcher.close();
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

async function runDev(): Promise<void> {
  const root = `file://${Deno.cwd()}/`;
  const hostname = Deno.env.get("HOST") || "127.0.0.1";
  const supervisor = new DevSupervisor({
    hostname,
    // An invalid PORT is the server's to report, in its own words.
    port: Number(Deno.env.get("PORT") || 8000) || 0,
    root,
    env: {
      DEV_MODE: "true",
      NODE_ENV: "development",
      // Dev pages show monitoring data: keep them on this machine unless HOST says otherwise
      // (the inbox then refuses to start: see dev_boot.ts).
      HOST: hostname,
      // The bundle links its source maps; the browser's devtools fetch them.
      SERVE_SOURCE_MAPS: Deno.env.get("SERVE_SOURCE_MAPS") || "true",
    },
  });
  const builder = await DevBuilder.create();
  // Files that were ever in the server's graph: one that stops parsing drops its imports from
  // the graph, but editing them must still restart the server.
  const serverFiles = new Set<string>();
  const restart = async () => {
    // The server needs a manifest: an older one is fine (the page shows the error), none is not.
    if (!await exists(MANIFEST_FILE)) return;
    await supervisor.restart();
    for (const file of await serverModuleFiles(root)) serverFiles.add(file);
  };

  // Watching starts first, so a save made while the first server starts is not missed; its
  // rebuild waits for the first one.
  const firstStart = Promise.withResolvers<void>();
  const stopWatching = watchPaths(WATCHED, async (changed) => {
    await firstStart.promise;
    const client = [...changed].some((path) => path.startsWith("client/"));
    if (supervisor.started && !needsRestart(changed, serverFiles)) {
      if (client) await builder.build();
      return;
    }
    // Stopped before the build: a good build would make the old server tell pages to reload
    // just as it goes away, and a page reloaded then gets the browser's own error page, which
    // never reloads. Pages reconnect to whatever answers next (server or error page) instead.
    await supervisor.stop();
    if (client) await builder.build();
    await restart();
  });
  console.log(
    "dev: watching client/ (rebuild, then the page reloads) and the server's modules " +
      "(main.ts, server/, client/routes.tsx, client/App.tsx and their imports: restart)",
  );
  try {
    await builder.build();
    await restart();
  } finally {
    firstStart.resolve();
  }
  if (!supervisor.started) console.error("dev: the server starts after the first good build");

  onStopRequest(async () => {
    stopWatching();
    await supervisor.stop();
    await builder.dispose();
    Deno.exit(0);
  });
}

if (import.meta.main) {
  await runDev();
}
