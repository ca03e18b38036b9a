/**
 * `deno task dev`: the client rebuilt on every change, the server restarted on every server
 * change, and the open page reloaded after either.
 *
 * - client/ is watched here. Each change rebuilds with esbuild's incremental context
 *   (unminified, linked source maps), then writes the build status file that the server
 *   watches (server/dev/reload.ts): a good build is swapped in and the page reloads; a broken
 *   one is printed here and drawn over the page, and the next good one clears it.
 * - The server runs as a child, `deno run --watch main.ts` with `DEV_MODE=true`, so Deno restarts
 *   it when main.ts, server/ or client/App.tsx (which the server renders) change.
 */
import * as esbuild from "esbuild";
import { buildOptions, finishBuild, hashInputs, OUT_DIR } from "./build.ts";
import { CONFIG_VARIABLES, DEV_VARIABLES } from "../lifecycle/config.ts";
import { type BuildError, type BuildStatus, writeBuildStatus } from "../dev/reload.ts";
import { MANIFEST_FILE } from "../build/manifest.ts";

const CLIENT_DIR = "client";
// Editors save in bursts (write, rename, chmod): wait for the burst to end before building.
const DEBOUNCE_MS = 40;
// How long each step of stopping the server may take before the next, harder one.
const STOP_TIMEOUT_MS = 3_000;

/**
 * Flags of the dev server: those of `deno task start`, plus the dev switches, reading client/
 * (the dev client script) and server/ (boot.ts loads the dev modules from there at run time),
 * and watching for changes.
 */
export const DEV_SERVER_ARGS: readonly string[] = [
  "run",
  "--watch",
  "--no-clear-screen",
  "--allow-net",
  "--allow-read=static,client,server",
  `--allow-env=NODE_ENV,${[...CONFIG_VARIABLES, ...DEV_VARIABLES].join(",")}`,
  "main.ts",
];

/** Turn an esbuild message into what the status file and the overlay carry. */
export function toBuildError(message: esbuild.Message): BuildError {
  const location = message.location;
  return location === null ? { text: message.text } : {
    text: message.text,
    file: location.file,
    line: location.line,
    column: location.column + 1, // esbuild counts columns from 0, editors from 1
    lineText: location.lineText,
  };
}

/** esbuild's incremental build of client/, writing the manifest and the status file. */
export class DevBuilder {
  readonly #context: esbuild.BuildContext;
  // Larger than any earlier run's, so a server that read an old status file sees the new ones.
  #seq = Date.now();

  private constructor(context: esbuild.BuildContext) {
    this.#context = context;
  }

  static async create(): Promise<DevBuilder> {
    await Deno.mkdir(OUT_DIR, { recursive: true });
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
  const walk = async (dir: string) => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      if (entry.name.startsWith(".")) continue;
      if (entry.isDirectory) await walk(path);
      else if (!keep.has(path)) await Deno.remove(path).catch(() => {});
    }
  };
  await walk(OUT_DIR);
}

/**
 * Call `onChange` once per burst of changes under `dir`, never twice at the same time (a change
 * during a run schedules one more run). Returns a function that stops watching.
 */
export function watchDirectory(dir: string, onChange: () => Promise<void>): () => void {
  const watcher = Deno.watchFs(dir, { recursive: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  const run = async () => {
    if (running) {
      again = true;
      return;
    }
    do {
      again = false;
      running = onChange();
      await running.catch((error) => console.error("dev:", error));
    } while (again);
    running = undefined;
  };
  (async () => {
    for await (const event of watcher) {
      if (event.kind === "access") continue;
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

/**
 * The server under `deno run --watch`. Its output is relayed as it comes, and read for the
 * watcher's own lines: after a signal `--watch` lets the program shut down gracefully but then
 * keeps waiting for a change, so stopping takes a second signal once the program has finished.
 */
class DevServer {
  readonly #child: Deno.ChildProcess;
  readonly #relayed: Promise<unknown>;
  #programEnded = Promise.withResolvers<void>();

  constructor() {
    this.#child = new Deno.Command(Deno.execPath(), {
      args: [...DEV_SERVER_ARGS],
      env: {
        DEV_MODE: "true",
        NODE_ENV: "development",
        // Dev pages show monitoring data: keep them on this machine unless HOST says otherwise
        // (the inbox then refuses to start: see dev_boot.ts).
        HOST: Deno.env.get("HOST") || "127.0.0.1",
        // The bundle links its source maps; the browser's devtools fetch them.
        SERVE_SOURCE_MAPS: Deno.env.get("SERVE_SOURCE_MAPS") || "true",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#relayed = Promise.all([
      this.#relay(this.#child.stdout, Deno.stdout),
      this.#relay(this.#child.stderr, Deno.stderr),
    ]);
  }

  /** Let the program shut down (monitoring flushed), then end the watcher. */
  async stop(): Promise<void> {
    const exited = this.#child.status.then(() => true);
    const within = (ms: number) =>
      Promise.race([exited, new Promise<false>((r) => setTimeout(() => r(false), ms))]);
    this.#signal("SIGINT");
    await Promise.race([this.#programEnded.promise, within(STOP_TIMEOUT_MS)]);
    this.#signal("SIGINT");
    if (!await within(STOP_TIMEOUT_MS)) this.#signal("SIGKILL");
    await this.#child.status;
    await this.#relayed;
  }

  #signal(signal: Deno.Signal): void {
    try {
      this.#child.kill(signal);
    } catch { /* already exited */ }
  }

  async #relay(from: ReadableStream<Uint8Array>, to: typeof Deno.stdout): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of from) {
      await to.write(chunk);
      if (/Process (finished|failed)/.test(decoder.decode(chunk, { stream: true }))) {
        this.#programEnded.resolve();
      }
    }
  }
}

async function runDev(): Promise<void> {
  const builder = await DevBuilder.create();
  let server: DevServer | undefined;
  const startWhenBuilt = async () => {
    // The server needs a manifest: an older one is fine (the page shows the error), none is not.
    if (server === undefined && await exists(MANIFEST_FILE)) server = new DevServer();
  };

  await builder.build();
  await startWhenBuilt();
  if (server === undefined) console.error("dev: the server starts after the first good build");
  const stopWatching = watchDirectory(CLIENT_DIR, async () => {
    await builder.build();
    await startWhenBuilt();
  });
  console.log(
    "dev: watching client/ (rebuild, then the page reloads) and the server's modules " +
      "(main.ts, server/, client/App.tsx: restart)",
  );

  let stopping = false;
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    Deno.addSignalListener(signal, async () => {
      if (stopping) return;
      stopping = true;
      stopWatching();
      await server?.stop();
      await builder.dispose();
      Deno.exit(0);
    });
  }
}

if (import.meta.main) {
  await runDev();
}
