/**
 * The build manifest: which hashed files the page must load. The build derives it from
 * esbuild's metafile; the server reads it once at start-up.
 */
import { MANIFEST_FILE } from "../constants.ts";
import { readBuildFile } from "./build_file.ts";

/** What the HTML document needs to reference, as URL paths. */
export interface Manifest {
  /** Short content hash of every output: the default release. */
  readonly buildId: string;
  /** Hash of the build's inputs, so `build --if-needed` can skip an up-to-date build. */
  readonly inputHash: string;
  /** The module script that hydrates the page. */
  readonly script: string;
  /** Chunks the entry imports statically: preloaded so they download in parallel. */
  readonly preload: readonly string[];
  readonly styles: readonly string[];
}

/** The parts of esbuild's metafile this module reads. */
export interface Metafile {
  outputs: Record<string, {
    entryPoint?: string;
    cssBundle?: string;
    imports: { path: string; kind: string; external?: boolean }[];
  }>;
}

/**
 * Derive the manifest from esbuild's metafile. `staticDir` is the folder served at `/`;
 * output paths in the metafile are relative to the working directory.
 *
 * @example
 * manifestFromMetafile(meta, { entryPoint: "client/main.tsx", staticDir: "static", ... });
 */
export function manifestFromMetafile(
  metafile: Metafile,
  options: { entryPoint: string; staticDir: string; buildId: string; inputHash: string },
): Manifest {
  const entry = Object.entries(metafile.outputs).find(([, out]) =>
    out.entryPoint === options.entryPoint
  );
  if (entry === undefined) {
    throw new Error(`the build has no output for ${options.entryPoint}`);
  }
  const [entryPath, output] = entry;
  const toUrl = (path: string) => {
    const prefix = options.staticDir.replace(/\/$/, "") + "/";
    if (!path.startsWith(prefix)) throw new Error(`${path} is outside ${options.staticDir}`);
    return "/" + path.slice(prefix.length);
  };
  return {
    buildId: options.buildId,
    inputHash: options.inputHash,
    script: toUrl(entryPath),
    preload: staticImports(metafile, entryPath).map(toUrl),
    styles: output.cssBundle ? [toUrl(output.cssBundle)] : [],
  };
}

// Every chunk reachable through static imports: the browser needs all of them before the
// entry runs, so preloading them removes a round trip per level of nesting.
function staticImports(metafile: Metafile, from: string, seen = new Set<string>()): string[] {
  for (const imp of metafile.outputs[from]?.imports ?? []) {
    if (imp.kind !== "import-statement" || imp.external || seen.has(imp.path)) continue;
    seen.add(imp.path);
    staticImports(metafile, imp.path, seen);
  }
  return [...seen];
}

/** Check that a parsed JSON value is a manifest; throws with a one-line reason if not. */
export function validateManifest(value: unknown): Manifest {
  const m = value as Partial<Manifest> | null;
  const ok = typeof m === "object" && m !== null &&
    typeof m.buildId === "string" && typeof m.inputHash === "string" &&
    typeof m.script === "string" && isStringArray(m.preload) && isStringArray(m.styles);
  if (!ok) throw new Error(`${MANIFEST_FILE} is not a valid manifest; run \`deno task build\``);
  return m as Manifest;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((v) => typeof v === "string");
}

/** Read the manifest written by the build; the message says what to run when it is missing. */
export async function readManifest(path = MANIFEST_FILE): Promise<Manifest> {
  return validateManifest(JSON.parse(await readBuildFile(path)));
}
