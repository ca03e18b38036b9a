/**
 * The client build's JavaScript as browsers meet it, from the build's manifest and esbuild
 * metafile: every .js file with its gzip -9 size, whether hydration waits for it (the shell's entry
 * script and what it imports statically), whether a page with every Sentry setting off downloads
 * it (not a product's chunk, what only those import, nor Replay's worker), and whether it is a
 * page's (a page module's chunk, or one only page chunks import); and the budgets of deno.json.
 */
import { gzipSync } from "node:zlib";
import type { Metafile } from "esbuild";
import { type Manifest, readManifest } from "../../server/build/manifest.ts";
import { MANIFEST_FILE, METAFILE_FILE, STATIC_DIR } from "../../server/constants.ts";

/** One .js file of the build. */
export interface PayloadFile {
  /** Its URL path, `/build/...`. */
  readonly url: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
  readonly beforeHydration: boolean;
  /** Downloaded by a page whose SENTRY_* product settings are all off (the shell's part). */
  readonly settingsOff: boolean;
  /** Downloaded only by the pages whose module it belongs to, not by the shell. */
  readonly page: boolean;
}

/** deno.json's `"budgets"` in bytes (it holds KB, gzip): the shell's three, and each page's. */
export interface Budgets {
  readonly beforeHydrationBytes: number;
  readonly settingsOffBytes: number;
  readonly allJavaScriptBytes: number;
  readonly pageBytes: number;
}

/** The chunks client/monitoring.ts imports only while a product's setting is on. */
const PRODUCT_ENTRY = /^client\/sentry_features\//;

/** Read the budgets from the deno.json in `dir`, as the build does. */
export async function readBudgets(dir = "."): Promise<Budgets> {
  const { shell, page } = JSON.parse(await Deno.readTextFile(`${dir}/deno.json`)).budgets;
  return {
    beforeHydrationBytes: shell.beforeHydration * 1024,
    settingsOffBytes: shell.settingsOff * 1024,
    allJavaScriptBytes: shell.all * 1024,
    pageBytes: page * 1024,
  };
}

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
  const pages = new Set(Object.values(manifest.pages).flatMap((p) => [p.script, ...p.preload]));
  const files: PayloadFile[] = [];
  for (const path of Object.keys(outputs).filter((p) => p.endsWith(".js")).sort()) {
    const bytes = await Deno.readFile(`${dir}/${path}`);
    files.push({
      url: toUrl(path),
      rawBytes: bytes.byteLength,
      gzipBytes: gzipSync(bytes, { level: 9 }).byteLength,
      beforeHydration: critical.has(toUrl(path)),
      settingsOff: settingsOff.has(path),
      page: pages.has(toUrl(path)) && !settingsOff.has(path),
    });
  }
  return files;
}

/** A page module's own JavaScript: its chunk and those only pages import. */
export function pageFiles(manifest: Manifest, module: string): string[] {
  const { script, preload } = manifest.pages[module];
  return [script, ...preload];
}

/** The page module a document's `#root` names (`data-page`, its chunk's URL). */
export function pageModuleOf(html: string, manifest: Manifest): string {
  const script = /<div id="root" data-page="([^"]+)"/.exec(html)?.[1];
  const found = Object.entries(manifest.pages).find(([, chunk]) => chunk.script === script);
  if (found === undefined) throw new Error(`no page chunk named by ${script}`);
  return found[0];
}
