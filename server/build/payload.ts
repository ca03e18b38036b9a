/**
 * The client build's JavaScript as browsers download it, gzip -9 (1 KB = 1024 bytes), and the
 * budgets a team keeps in deno.json's `"budgets"`: the shell's three and one for each page.
 */
import { gzipSync } from "node:zlib";
import type { Metafile } from "esbuild";
import { readManifest } from "./manifest.ts";
import { MANIFEST_FILE, METAFILE_FILE, STATIC_DIR } from "../constants.ts";

/** One .js file of the build. */
export interface PayloadFile {
  /** Its URL path, `/build/...`. */
  readonly url: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
  /** The shell's entry and what it imports statically: hydration waits for them. */
  readonly beforeHydration: boolean;
  /** The shell's, downloaded by a page whose SENTRY_* product settings are all off. */
  readonly settingsOff: boolean;
  /** A page module's chunk, or a chunk only pages import: not the shell's. */
  readonly page: boolean;
}

/** deno.json's `"budgets"`, in KB gzip: the shell's JavaScript before hydration, with every
 * Sentry setting off and with all on; and each page's own chunks. */
export interface Budgets {
  readonly shell: {
    readonly beforeHydration: number;
    readonly settingsOff: number;
    readonly all: number;
  };
  readonly page: number;
}

/** The chunks client/monitoring.ts imports only while a product's setting is on. */
const PRODUCT_ENTRY = /^client\/sentry_features\//;

/** Read the budgets of a deno.json; a missing or malformed one throws a one-line reason. */
export async function readBudgets(file = "deno.json"): Promise<Budgets> {
  const budgets = JSON.parse(await Deno.readTextFile(file)).budgets;
  const { beforeHydration, settingsOff, all } = budgets?.shell ?? {};
  if (![beforeHydration, settingsOff, all, budgets?.page].every((kb) => kb > 0)) {
    throw new Error(
      `${file}: "budgets" must hold shell.beforeHydration, shell.settingsOff, shell.all and page, in KB`,
    );
  }
  return budgets;
}

/** Every .js file the build in `dir` (a project's root) wrote, and each page module's bytes (its
 * chunk and the chunks only pages import). */
export async function measurePayload(dir = ".") {
  // Fails with "run `deno task build`" when there is no build.
  const manifest = await readManifest(`${dir}/${MANIFEST_FILE}`);
  const { outputs }: Metafile = JSON.parse(await Deno.readTextFile(`${dir}/${METAFILE_FILE}`));
  const toUrl = (path: string) => path.slice(STATIC_DIR.length);
  const shell = new Set<string>();
  const visit = (path: string) => {
    if (shell.has(toUrl(path))) return;
    shell.add(toUrl(path));
    for (const { path: next, external } of outputs[path].imports) {
      if (!external && !PRODUCT_ENTRY.test(outputs[next].entryPoint ?? "")) visit(next);
    }
  };
  visit(`${STATIC_DIR}${manifest.script}`);
  const chunks = Object.values(manifest.pages);
  const critical = new Set([manifest.script, ...manifest.preload]);
  const files: PayloadFile[] = [];
  for (const path of Object.keys(outputs).filter((p) => p.endsWith(".js")).sort()) {
    const bytes = await Deno.readFile(`${dir}/${path}`);
    const url = toUrl(path);
    files.push({
      url,
      rawBytes: bytes.byteLength,
      gzipBytes: gzipSync(bytes, { level: 9 }).byteLength,
      beforeHydration: critical.has(url),
      settingsOff: shell.has(url),
      page: !shell.has(url) && chunks.some((c) => c.script === url || c.preload.includes(url)),
    });
  }
  const sizes = new Map(files.map((f) => [f.url, f.gzipBytes]));
  const pages = new Map(
    Object.entries(manifest.pages).map(([module, { script, preload }]) => [
      module,
      [script, ...preload].reduce((sum, url) => sum + (sizes.get(url) ?? 0), 0),
    ]),
  );
  return { files, pages };
}

/** Each budget against what it measures, one line each (its size and headroom, or its excess),
 * and those over; `label` names a page module. */
export function checkBudgets(
  { files, pages }: Awaited<ReturnType<typeof measurePayload>>,
  budgets: Budgets,
  label = (module: string) => module,
) {
  const sum = (keep: (f: PayloadFile) => boolean) =>
    files.filter(keep).reduce((n, f) => n + f.gzipBytes, 0);
  const lines = [
    measured(
      "JavaScript before hydration",
      sum((f) => f.beforeHydration),
      budgets.shell.beforeHydration,
    ),
    measured(
      "JavaScript with every setting off",
      sum((f) => f.settingsOff),
      budgets.shell.settingsOff,
    ),
    measured("all JavaScript", sum((f) => !f.page), budgets.shell.all),
    ...[...pages].map(([module, bytes]) => measured(`page ${label(module)}`, bytes, budgets.page)),
  ];
  return { lines, over: lines.filter((line) => line.includes(" over its ")) };
}

function measured(what: string, bytes: number, budgetKb: number): string {
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  const left = budgetKb * 1024 - bytes;
  const by = `${-left} ${left === -1 ? "byte" : "bytes"}`;
  return left >= 0
    ? `${what} is ${kb(bytes)} gzip, ${kb(left)} under its ${kb(budgetKb * 1024)} budget`
    : `${what} is ${kb(bytes)} gzip, over its ${kb(budgetKb * 1024)} budget by ${by}`;
}
