/** The client build: esbuild bundles `client/` into content-hashed ESM in `static/build/`, with
 * Sentry debug ids, precompressed copies and the manifest the server reads. */
import * as esbuild from "esbuild";
import { compressCopies, ENCODED_SUFFIX, isCompressible } from "../http/compress.ts";
import { writeDebugId } from "./debug_ids.ts";
import { sentryImportCheck, sentryProductsApart } from "./sentry_plugin.ts";
import { type Manifest, readManifest } from "./manifest.ts";
import {
  BUILD_DIR,
  MANIFEST_FILE,
  METAFILE_FILE,
  PAGES_FILE,
  SERVER_BUNDLE,
  STATIC_DIR,
} from "../constants.ts";
import { listFiles } from "../walk_files.ts";

const ENTRY_POINT = "client/main.tsx";
const [REPLAY_WORKER, REPLAY_WORKER_OUT] = ["@sentry/replay/worker-bundler", "replay-worker"];
// Each page module is a chunk of its own; the declarations (loaders too) reach the server only.
const PAGES_DIR = "client/pages";
const PAGES_MODULE = "server/pages.ts";

/** esbuild options for the browser's bundle (the shell's entry and one per page module) and the
 * server's (the declared pages, `App`, and each page module's exports, to find a page's module).
 * Deno cannot import CSS, so the server's drops it; npm packages stay external. */
async function esbuildOptions(mode: "production" | "development"): Promise<esbuild.BuildOptions[]> {
  const production = mode === "production";
  const importCheck = sentryImportCheck(Deno.cwd());
  const common = {
    bundle: true,
    format: "esm",
    jsx: "automatic",
    define: { "process.env.NODE_ENV": JSON.stringify(mode) },
  } as const;
  const forServer: esbuild.BuildOptions = {
    ...common,
    platform: "neutral",
    packages: "external",
    loader: { ".css": "empty" },
    plugins: [importCheck],
  };
  // The modules of client/pages/ that server/pages.ts imports, found by bundling it alone.
  const alone = { ...forServer, entryPoints: [PAGES_MODULE], write: false, metafile: true };
  const { inputs } = (await esbuild.build(alone)).metafile!;
  const pageModules = Object.keys(inputs).filter((path) =>
    path.startsWith(`${PAGES_DIR}/`) && /\.[jt]sx?$/.test(path)
  ).sort();
  const client: esbuild.BuildOptions = {
    ...common,
    // Replay's compression worker is a file of the build: the SDK's inlined copy would run from a
    // `blob:` URL, which the CSP refuses.
    entryPoints: [ENTRY_POINT, { in: REPLAY_WORKER, out: REPLAY_WORKER_OUT }, ...pageModules],
    outdir: BUILD_DIR,
    splitting: true,
    target: ["es2022", "chrome111", "firefox113", "safari16.4"],
    minify: production,
    sourcemap: production ? "external" : "linked",
    entryNames: "[name]-[hash]",
    chunkNames: "chunks/[name]-[hash]",
    assetNames: "assets/[name]-[hash]",
    metafile: true,
    legalComments: "linked",
    // Sentry's tree-shaking flags: no debug logging in production, no inlined Replay worker.
    define: {
      ...common.define,
      __SENTRY_DEBUG__: String(!production),
      __SENTRY_EXCLUDE_REPLAY_WORKER__: "true",
    },
    plugins: [importCheck, sentryProductsApart(), pagesImportShared()],
  };
  const server: esbuild.BuildOptions = {
    ...forServer,
    stdin: {
      contents: [
        `export { pages } from "./${PAGES_MODULE}";`,
        'export { App } from "./client/App.tsx";',
        ...pageModules.map((path, i) => `import * as m${i} from "./${path}";`),
        `export const pageModules = [${pageModules.map((p, i) => `["${p}", m${i}]`).join(", ")}];`,
      ].join("\n"),
      resolveDir: ".",
      loader: "ts",
      sourcefile: "server-pages.ts",
    },
    outfile: SERVER_BUNDLE,
    sourcemap: "inline",
  };
  return [client, server];
}

// The shell's modules a page may import: each page module imports them all first (on its first
// line: source maps keep their lines), so they share one set of importers and stay in the shell's
// chunks whichever a page uses. Pages coming and going never change the shell's bytes.
function pagesImportShared(): esbuild.Plugin {
  const shared = ["react", "react/jsx-runtime", "config.ts", "sentry.ts", "use_hydrated.ts"]
    .map((path) => `import "${path.endsWith(".ts") ? `${Deno.cwd()}/client/${path}` : path}";`);
  const pages = new RegExp(`^${RegExp.escape(`${Deno.cwd()}/${PAGES_DIR}/`)}.*\\.([jt]sx?)$`);
  const setup = (build: esbuild.PluginBuild) =>
    build.onLoad({ filter: pages }, async ({ path }) => ({
      contents: shared.join("") + await Deno.readTextFile(path),
      loader: pages.exec(path)![1] as esbuild.Loader,
    }));
  return { name: "pages-import-shared", setup };
}

async function sha256Hex(parts: BlobPart[]): Promise<string> {
  const bytes = await new Blob(parts).arrayBuffer();
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)).toHex();
}

/** Hash of every input of the production build: unchanged hash, unchanged output. */
async function hashInputs(): Promise<string> {
  const under = async (dir: string) => (await listFiles(dir)).map((file) => `${dir}/${file}`);
  // All of server/: server/pages.ts bundles whatever server modules its loaders import.
  const files = ["deno.json", "deno.lock", ...await under("client"), ...await under("server")];
  const parts: BlobPart[] = [];
  for (const file of files.sort()) parts.push(`\0${file}\0`, await Deno.readFile(file));
  return await sha256Hex(parts);
}

/** Run a full production build and return its manifest. */
export async function build(): Promise<Manifest> {
  const inputHash = await hashInputs();
  await Deno.remove(BUILD_DIR, { recursive: true }).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  const options = await esbuildOptions("production");
  const [client] = await Promise.all(options.map((o) => esbuild.build(o)));
  return await finishBuild(client.metafile!, inputHash, true);
}

/** Dev mode's incremental build (unminified, uncompressed); each rebuild drops the last outputs. */
export async function incrementalBuild() {
  await Deno.mkdir(BUILD_DIR, { recursive: true });
  let entries = "";
  let contexts: esbuild.BuildContext[] = [];
  const dispose = () => Promise.all(contexts.map((context) => context.dispose()));
  return {
    async rebuild(): Promise<void> {
      // A page module added or removed changes the entry points: new contexts, once.
      const options = await esbuildOptions("development");
      if (JSON.stringify(options[0].entryPoints) !== entries) {
        await dispose();
        contexts = await Promise.all(options.map((o) => esbuild.context(o)));
        entries = JSON.stringify(options[0].entryPoints);
      }
      const [client, server] = contexts;
      const { metafile } = await client.rebuild();
      await server.rebuild();
      // Never up to date for `build --if-needed`: production must build again.
      await finishBuild(metafile!, "development", false);
      // Every rebuild writes new hashed names: delete the previous ones (and a production
      // build's compressed copies) so static/ holds one build. Dot files (the manifest) stay.
      const keep = new Set(Object.keys(metafile!.outputs));
      for (const file of await listFiles(BUILD_DIR)) {
        const path = `${BUILD_DIR}/${file}`;
        if (!file.split("/").some((part) => part.startsWith(".")) && !keep.has(path)) {
          await Deno.remove(path).catch(() => {});
        }
      }
    },
    dispose,
  };
}

/** Add debug ids (and with `compress`, `.br`/`.gz` copies), then write the manifest. */
async function finishBuild(metafile: esbuild.Metafile, inputHash: string, compress: boolean) {
  const outputs = Object.keys(metafile.outputs).sort();
  const buildId = (await sha256Hex(outputs.map((out) => `${out}\n`))).slice(0, 12);
  const manifest = manifestFromMetafile(metafile, buildId, inputHash);
  for (const out of outputs.filter((o) => o.endsWith(".js"))) await writeDebugId(out);
  // Source maps are large and not served by default: compressing them would double the build.
  const worthIt = (out: string) => compress && isCompressible(out) && !out.endsWith(".map");
  for (const out of outputs.filter(worthIt)) {
    const copies = await compressCopies(await Deno.readFile(out), { best: true });
    for (const [encoding, bytes] of copies) {
      await Deno.writeFile(`${out}${ENCODED_SUFFIX.get(encoding)}`, bytes);
    }
  }
  await Deno.writeTextFile(MANIFEST_FILE, JSON.stringify(manifest, null, 2) + "\n");
  // For bundle analysis and the payload budgets: which chunk each import leads to.
  await Deno.writeTextFile(METAFILE_FILE, JSON.stringify(metafile));
  return manifest;
}

/** The manifest of an esbuild run: its outputs (under `static/`) as URL paths. */
export function manifestFromMetafile(
  metafile: esbuild.Metafile,
  buildId: string,
  inputHash: string,
): Manifest {
  const outputs = Object.entries(metafile.outputs);
  const [entry, output] = outputs.find(([, out]) => out.entryPoint === ENTRY_POINT)!;
  const [worker] = outputs.find(([path, out]) =>
    path.startsWith(`${BUILD_DIR}/${REPLAY_WORKER_OUT}-`) && out.entryPoint !== undefined
  )!;
  // Every chunk reachable by static imports: preloading saves a round trip per nesting level.
  const reachable = (from: string, found = new Set<string>()) => {
    for (const imp of metafile.outputs[from].imports) {
      if (imp.kind !== "import-statement" || imp.external || found.has(imp.path)) continue;
      found.add(imp.path);
      reachable(imp.path, found);
    }
    return found;
  };
  const shell = reachable(entry);
  const toUrl = (path: string) => path.slice(STATIC_DIR.length);
  // A page's chunk preloads only what the shell does not already load.
  const pages = outputs.filter(([path, out]) =>
    path.endsWith(".js") && out.entryPoint?.startsWith(`${PAGES_DIR}/`)
  ).map(([path, out]) => [out.entryPoint!, {
    script: toUrl(path),
    preload: [...reachable(path)].filter((p) => p !== entry && !shell.has(p)).map(toUrl),
    styles: out.cssBundle ? [toUrl(out.cssBundle)] : [],
  }]);
  return {
    buildId,
    inputHash,
    script: toUrl(entry),
    preload: [...shell].map(toUrl),
    styles: output.cssBundle ? [toUrl(output.cssBundle)] : [],
    replayWorker: toUrl(worker),
    pages: Object.fromEntries(pages),
  };
}

/** Whether the production build on disk was made from exactly the current inputs. */
export async function isUpToDate(): Promise<boolean> {
  try {
    const manifest = await readManifest();
    await Promise.all([PAGES_FILE, SERVER_BUNDLE].map(Deno.stat));
    return manifest.inputHash === await hashInputs();
  } catch {
    return false;
  }
}
