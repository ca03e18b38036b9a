/**
 * The client build's JavaScript as browsers meet it, from the build's manifest and esbuild
 * metafile: every .js file with its gzip -9 size, whether hydration waits for it (the entry script
 * and what it imports statically) and whether a page with every Sentry setting off downloads it
 * (not a product's chunk, what only those import, nor Replay's worker).
 */
import { gzipSync } from "node:zlib";
import type { Metafile } from "esbuild";
import { readManifest } from "../../server/build/manifest.ts";
import { MANIFEST_FILE, METAFILE_FILE, STATIC_DIR } from "../../server/constants.ts";

/** One .js file of the build. */
export interface PayloadFile {
  /** Its URL path, `/build/...`. */
  readonly url: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
  readonly beforeHydration: boolean;
  /** Downloaded by a page whose SENTRY_* product settings are all off. */
  readonly settingsOff: boolean;
}

/** The chunks client/monitoring.ts imports only while a product's setting is on. */
const PRODUCT_ENTRY = /^client\/sentry_features\//;

/** Every .js file the build in `dir` (a project's root) wrote, as browsers can download it. */
export async function measurePayload(dir = "."): Promise<PayloadFile[]> {
  // Fails with "run `deno task build`" when there is no build.
  const manifest = await readManifest(`${dir}/${MANIFEST_FILE}`);
  const { outputs }: Metafile = JSON.parse(await Deno.readTextFile(`${dir}/${METAFILE_FILE}`));
  const toUrl = (path: string) => path.slice(STATIC_DIR.length);
  const entry = Object.keys(outputs).find((path) => toUrl(path) === manifest.script);
  if (entry === undefined) throw new Error(`${manifest.script} is not in the metafile`);
  const settingsOff = new Set<string>();
  const visit = (path: string) => {
    if (settingsOff.has(path)) return;
    settingsOff.add(path);
    for (const { path: next, external } of outputs[path].imports) {
      if (!external && !PRODUCT_ENTRY.test(outputs[next].entryPoint ?? "")) visit(next);
    }
  };
  visit(entry);
  const critical = new Set([manifest.script, ...manifest.preload]);
  const files: PayloadFile[] = [];
  for (const path of Object.keys(outputs).filter((p) => p.endsWith(".js")).sort()) {
    const bytes = await Deno.readFile(`${dir}/${path}`);
    files.push({
      url: toUrl(path),
      rawBytes: bytes.byteLength,
      gzipBytes: gzipSync(bytes, { level: 9 }).byteLength,
      beforeHydration: critical.has(toUrl(path)),
      settingsOff: settingsOff.has(path),
    });
  }
  return files;
}
