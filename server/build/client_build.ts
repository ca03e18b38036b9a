/**
 * The client build: bundles `client/` with esbuild into content-hashed ESM in `static/build/`,
 * writes the manifest the server reads, and precompresses what compresses (JS, CSS, SVG, JSON,
 * text: compress.ts) to `.br` and `.gz`. Run by `deno task build` (server/tasks/build.ts) and,
 * incrementally, by the dev runner (server/tasks/dev.ts).
 */
import * as esbuild from "esbuild";
import { compressCopies, ENCODED_SUFFIX, isCompressible } from "./compress.ts";
import { addDebugIdToSourceMap, debugIdFor, injectDebugId } from "./debug_ids.ts";
import { type Manifest, manifestFromMetafile, readManifest } from "./manifest.ts";
import { BUILD_DIR, MANIFEST_FILE, PAGES_FILE, STATIC_DIR } from "../constants.ts";
import { listFiles } from "../walk_files.ts";

/** The browser's entry point. */
export const ENTRY_POINT = "client/main.tsx";
// Files whose change must invalidate the build, besides everything under client/.
const BUILD_INPUTS = [
  "deno.json",
  "deno.lock",
  "server/build/client_build.ts",
  "server/build/compress.ts",
  "server/build/debug_ids.ts",
  "server/build/manifest.ts",
];
// Source maps are not served by default and are large: compressing them would double the build.
const precompressed = (file: string) => isCompressible(file) && !file.endsWith(".map");

/** esbuild options shared by the production build and dev mode's incremental context. */
export function buildOptions(mode: "production" | "development"): esbuild.BuildOptions {
  const production = mode === "production";
  return {
    entryPoints: [ENTRY_POINT],
    outdir: BUILD_DIR,
    bundle: true,
    format: "esm",
    splitting: true,
    platform: "browser",
    target: ["es2022", "chrome111", "firefox113", "safari16.4"],
    jsx: "automatic",
    minify: production,
    sourcemap: production ? "external" : "linked",
    entryNames: "[name]-[hash]",
    chunkNames: "chunks/[name]-[hash]",
    assetNames: "assets/[name]-[hash]",
    metafile: true,
    write: true,
    legalComments: "linked",
    define: {
      "process.env.NODE_ENV": JSON.stringify(mode),
      // Sentry's tree-shaking flags: drop its debug logging from production bundles.
      __SENTRY_DEBUG__: String(!production),
    },
    logLevel: "warning",
  };
}

/** Hash of every build input: unchanged hash, unchanged output. */
export async function hashInputs(mode: string): Promise<string> {
  const clientFiles = (await listFiles("client")).map((file) => `client/${file}`);
  // A production build also renders the pages, with server/page/.
  const serverFiles = mode === "production"
    ? (await listFiles("server/page")).map((file) => `server/page/${file}`)
    : [];
  const files = [...new Set([...BUILD_INPUTS, ...clientFiles, ...serverFiles])].sort();
  const hash = new Hasher();
  hash.add(new TextEncoder().encode(mode));
  for (const file of files) {
    hash.add(new TextEncoder().encode(`\0${file}\0`));
    hash.add(await Deno.readFile(file));
  }
  return await hash.digest();
}

/** Run a full build and return its manifest. */
export async function build(mode: "production" | "development" = "production"): Promise<Manifest> {
  const inputHash = await hashInputs(mode);
  await Deno.remove(BUILD_DIR, { recursive: true }).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
  const result = await esbuild.build(buildOptions(mode));
  return await finishBuild(result.metafile!, inputHash, mode === "production");
}

/** Write the manifest (and compressed variants) for a finished esbuild run. */
export async function finishBuild(
  metafile: esbuild.Metafile,
  inputHash: string,
  compress: boolean,
): Promise<Manifest> {
  const outputs = Object.keys(metafile.outputs).sort();
  const hash = new Hasher();
  for (const out of outputs) hash.add(new TextEncoder().encode(out + "\n"));
  const manifest = manifestFromMetafile(metafile, {
    entryPoint: ENTRY_POINT,
    staticDir: STATIC_DIR,
    buildId: (await hash.digest()).slice(0, 12),
    inputHash,
  });
  for (const out of outputs.filter((o) => o.endsWith(".js"))) await writeDebugId(out);
  if (compress) {
    for (const out of outputs.filter(precompressed)) await precompress(out);
  }
  await Deno.writeTextFile(MANIFEST_FILE, JSON.stringify(manifest, null, 2) + "\n");
  return manifest;
}

/** Give a JS file and its source map the same Sentry debug id (see debug_ids.ts). */
export async function writeDebugId(file: string): Promise<void> {
  const bytes = await Deno.readFile(file);
  const debugId = await debugIdFor(bytes);
  await Deno.writeTextFile(file, injectDebugId(new TextDecoder().decode(bytes), debugId));
  const map = `${file}.map`;
  const mapJson = await Deno.readTextFile(map).catch(() => null);
  if (mapJson !== null) await Deno.writeTextFile(map, addDebugIdToSourceMap(mapJson, debugId));
}

/** Write `file.br` and `file.gz` beside `file`, each only when it is smaller. */
export async function precompress(file: string): Promise<void> {
  const copies = await compressCopies(await Deno.readFile(file), { best: true });
  for (const [encoding, bytes] of copies) {
    await Deno.writeFile(`${file}${ENCODED_SUFFIX.get(encoding)}`, bytes);
  }
}

// Collects bytes, then hashes them once; SubtleCrypto has no incremental API.
class Hasher {
  #parts: Uint8Array[] = [];
  add(bytes: Uint8Array) {
    this.#parts.push(bytes);
  }
  async digest(): Promise<string> {
    const blob = new Uint8Array(await new Blob(this.#parts as BlobPart[]).arrayBuffer());
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", blob));
    return digest.toHex();
  }
}

/** Whether the build on disk was made from exactly the current inputs. */
export async function isUpToDate(mode: string): Promise<boolean> {
  try {
    const manifest = await readManifest();
    // A production build also rendered the pages.
    if (mode === "production") await Deno.stat(PAGES_FILE);
    return manifest.inputHash === await hashInputs(mode);
  } catch {
    return false;
  }
}
