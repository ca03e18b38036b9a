/**
 * Client payload budgets, deno.json's `"budgets"` (the build prints each page against its own),
 * measured on the production build in static/build/ (`deno task test` builds it first). The
 * shell's: the JavaScript that must load before hydration (the entry script and the chunks it
 * imports statically), what a monitored page downloads with every Sentry product setting off,
 * and all of it (what a page with Replay, Feedback, profiling and logs on downloads, Replay's
 * worker included). And each page's: its module's chunk and the chunks only pages import, which
 * a page downloads besides the shell's.
 *
 * Sizes are gzip at level 9 of each file; 1 KB = 1024 bytes.
 */
import assert from "node:assert/strict";
import type { Metafile } from "esbuild";
import { type Manifest, readManifest } from "../server/build/manifest.ts";
import { METAFILE_FILE } from "../server/constants.ts";
import {
  type Budgets,
  measurePayload,
  pageFiles,
  type PayloadFile,
  readBudgets,
} from "./support/payload.ts";

const KB = 1024;
const BUDGETS = await readBudgets();

/** Each page module's own bytes (gzip): its chunk and the chunks only pages import. */
function pageSizes(files: readonly PayloadFile[], manifest: Pick<Manifest, "pages">) {
  const gzip = new Map(files.map((f) => [f.url, f.gzipBytes]));
  return new Map(
    Object.keys(manifest.pages).map((module) => [
      module,
      pageFiles(manifest as Manifest, module).reduce((n, url) => n + (gzip.get(url) ?? 0), 0),
    ]),
  );
}

/**
 * The budget check: the shell's three totals, and one line per budget exceeded (none when all
 * hold), a page's included. Pure, so it can be shown to fail on a payload that is too big.
 */
function checkBudgets(
  files: readonly PayloadFile[],
  budgets: Budgets,
  pages: ReadonlyMap<string, number> = new Map(),
) {
  const sum = (list: readonly PayloadFile[]) => list.reduce((n, f) => n + f.gzipBytes, 0);
  const beforeHydration = sum(files.filter((f) => f.beforeHydration));
  const settingsOff = sum(files.filter((f) => f.settingsOff));
  const allJavaScript = sum(files.filter((f) => !f.page));
  const over: string[] = [];
  const check = (what: string, total: number, budget: number) => {
    const excess = total - budget;
    if (excess <= 0) return;
    const by = `${excess} ${excess === 1 ? "byte" : "bytes"}`;
    over.push(`${what} is ${kb(total)} gzip, over its ${kb(budget)} budget by ${by}`);
  };
  check("JavaScript before hydration", beforeHydration, budgets.beforeHydrationBytes);
  check("JavaScript with every setting off", settingsOff, budgets.settingsOffBytes);
  check("all JavaScript", allJavaScript, budgets.allJavaScriptBytes);
  for (const [module, bytes] of pages) check(`page ${module}`, bytes, budgets.pageBytes);
  return { beforeHydration, settingsOff, allJavaScript, over };
}

function kb(bytes: number): string {
  return `${(bytes / KB).toFixed(1)} KB`;
}

function printSizes(
  files: readonly PayloadFile[],
  totals: ReturnType<typeof checkBudgets>,
  pages: ReadonlyMap<string, number>,
) {
  const rows = files.map((f) =>
    `  ${
      f.beforeHydration
        ? "before hydration"
        : f.settingsOff
        ? "lazy            "
        : f.page
        ? "a page's        "
        : "setting on only "
    }` +
    `  ${kb(f.rawBytes).padStart(9)} raw  ${kb(f.gzipBytes).padStart(8)} gzip  ${f.url}`
  );
  console.log(
    [
      "client JavaScript (gzip -9, 1 KB = 1024 bytes):",
      ...rows,
      `  before hydration:      ${kb(totals.beforeHydration)} of ${
        kb(BUDGETS.beforeHydrationBytes)
      }`,
      `  every setting off:     ${kb(totals.settingsOff)} of ${kb(BUDGETS.settingsOffBytes)}`,
      `  all (every one on):    ${kb(totals.allJavaScript)} of ${kb(BUDGETS.allJavaScriptBytes)}`,
      ...[...pages].map(([module, bytes]) =>
        `  page ${module}: ${kb(bytes)} of ${kb(BUDGETS.pageBytes)}`
      ),
    ].join("\n"),
  );
}

Deno.test("the client build stays within its JavaScript budgets (gzip), each page within its own", async () => {
  const files = await measurePayload();
  assert.ok(files.some((f) => f.beforeHydration), "no entry script found in static/build");
  const pages = pageSizes(files, await readManifest());
  assert.ok(pages.size > 0, "no page chunk found in static/build");
  const result = checkBudgets(files, BUDGETS, pages);
  printSizes(files, result, pages);
  assert.deepEqual(result.over, []);
});

Deno.test("the budgets are deno.json's, the ones the build prints each page against", async () => {
  const { budgets } = JSON.parse(await Deno.readTextFile("deno.json"));
  assert.deepEqual(BUDGETS, {
    beforeHydrationBytes: budgets.shell.beforeHydration * KB,
    settingsOffBytes: budgets.shell.settingsOff * KB,
    allJavaScriptBytes: budgets.shell.all * KB,
    pageBytes: budgets.page * KB,
  });
  for (const kb of Object.values(BUDGETS)) assert.ok(kb > 0 && Number.isFinite(kb));
});

Deno.test("each Sentry product is a chunk of its own, loaded after hydration and only when on", async () => {
  const files = await measurePayload();
  const manifest = await readManifest();
  const { outputs }: Metafile = JSON.parse(await Deno.readTextFile(METAFILE_FILE));
  const entryOf = (url: string) => outputs[`static${url}`].entryPoint;
  const products = files.filter((f) => /^client\/sentry_features\//.test(entryOf(f.url) ?? ""));
  assert.deepEqual(
    products.map((f) => entryOf(f.url)).sort(),
    ["feedback", "logs", "profiling", "replay"].map((name) => `client/sentry_features/${name}.ts`),
  );
  for (const file of products) {
    assert.equal(file.beforeHydration || file.settingsOff, false, file.url);
  }
  // Their code is theirs alone: the SDK they share adds little to a page with them off.
  const sum = (list: PayloadFile[]) => list.reduce((n, f) => n + f.gzipBytes, 0);
  const offOnly = sum(files.filter((f) => !f.settingsOff));
  assert.ok(offOnly > 55 * KB, `${offOnly} bytes only with the products on`);
  // Replay's worker is a file of the build, loaded only with Replay; its inlined copy is gone.
  const worker = files.find((f) => f.url === manifest.replayWorker);
  assert.ok(worker && !worker.settingsOff, manifest.replayWorker);
  assert.match(manifest.replayWorker, /^\/build\/replay-worker-[A-Z0-9]+\.js$/);
  for (const file of files) {
    const code = await Deno.readTextFile(`static${file.url}`);
    assert.ok(!code.includes("new Blob(["), `${file.url} builds a worker from a blob: URL`);
  }
});

Deno.test("the budget check fails a payload that is too big, naming the budget and by how much", () => {
  const BUDGETS = {
    beforeHydrationBytes: 72 * KB,
    settingsOffBytes: 121 * KB,
    allJavaScriptBytes: 185 * KB,
    pageBytes: 16 * KB,
  };
  const file = (gzipBytes: number, beforeHydration: boolean, settingsOff = true): PayloadFile => ({
    url: "/build/x.js",
    rawBytes: gzipBytes * 3,
    gzipBytes,
    beforeHydration,
    settingsOff,
    page: false,
  });
  // Exactly at every budget: passes.
  const atLimit = [file(72 * KB, true), file(49 * KB, false), file(64 * KB, false, false)];
  assert.deepEqual(checkBudgets(atLimit, BUDGETS).over, []);
  // One byte over the hydration budget, which also takes the other two one byte over.
  const tooBig = [file(72 * KB + 1, true), file(49 * KB, false), file(64 * KB, false, false)];
  const { over } = checkBudgets(tooBig, BUDGETS);
  assert.equal(over.length, 3);
  assert.match(over[0], /^JavaScript before hydration is 72\.0 KB gzip, .* by 1 byte$/);
  assert.match(over[1], /^JavaScript with every setting off is 121\.0 KB gzip, .* by 1 byte$/);
  assert.match(over[2], /^all JavaScript is 185\.0 KB gzip, over its 185\.0 KB budget by 1 byte$/);
  // A large product chunk breaks only the whole page's budget.
  const productTooBig = checkBudgets([file(10 * KB, true), file(176 * KB, false, false)], BUDGETS);
  assert.equal(productTooBig.over.length, 1);
  assert.match(productTooBig.over[0], /^all JavaScript is 186\.0 KB gzip.*by 1024 bytes$/);
  // A page's chunks count against the page's budget only, never the shell's.
  const pageFile = { ...file(100 * KB, false, false), url: "/build/big.js", page: true };
  const pages = pageSizes([pageFile], {
    pages: { "client/pages/big.tsx": { script: "/build/big.js", preload: [], styles: [] } },
  });
  const pageTooBig = checkBudgets([file(10 * KB, true), pageFile], BUDGETS, pages);
  assert.deepEqual(pageTooBig.over, [
    "page client/pages/big.tsx is 100.0 KB gzip, over its 16.0 KB budget by 86016 bytes",
  ]);
});
