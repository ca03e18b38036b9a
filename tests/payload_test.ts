/**
 * Client payload budgets, measured on the production build in static/build/ (`deno task test`
 * builds it first): the JavaScript that must load before hydration (the entry script and the
 * chunks it imports statically), what a monitored page downloads with every Sentry product setting
 * off, and all of it (every .js the build wrote: what a page with Replay, Feedback, profiling and
 * logs on downloads, Replay's worker included).
 *
 * Sizes are gzip at level 9 of each file; 1 KB = 1024 bytes.
 */
import assert from "node:assert/strict";
import type { Metafile } from "esbuild";
import { readManifest } from "../server/build/manifest.ts";
import { METAFILE_FILE } from "../server/constants.ts";
import { measurePayload, type PayloadFile } from "./support/payload.ts";

const KB = 1024;
const BUDGETS = {
  beforeHydrationBytes: 72 * KB,
  // 120 KB until the offline transport (IndexedDB store, retries: 1.2 KB) joined the SDK's chunk.
  settingsOffBytes: 121 * KB,
  allJavaScriptBytes: 185 * KB,
};

/**
 * The budget check: the three totals and one line per budget they exceed (none when all hold).
 * Pure, so it can be shown to fail on a payload that is too big.
 */
function checkBudgets(files: readonly PayloadFile[], budgets: typeof BUDGETS) {
  const sum = (list: readonly PayloadFile[]) => list.reduce((n, f) => n + f.gzipBytes, 0);
  const beforeHydration = sum(files.filter((f) => f.beforeHydration));
  const settingsOff = sum(files.filter((f) => f.settingsOff));
  const allJavaScript = sum(files);
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
  return { beforeHydration, settingsOff, allJavaScript, over };
}

function kb(bytes: number): string {
  return `${(bytes / KB).toFixed(1)} KB`;
}

function printSizes(files: readonly PayloadFile[], totals: ReturnType<typeof checkBudgets>) {
  const rows = files.map((f) =>
    `  ${
      f.beforeHydration
        ? "before hydration"
        : f.settingsOff
        ? "lazy            "
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
    ].join("\n"),
  );
}

Deno.test("the client build stays within its JavaScript budgets (gzip)", async () => {
  const files = await measurePayload();
  assert.ok(files.some((f) => f.beforeHydration), "no entry script found in static/build");
  const result = checkBudgets(files, BUDGETS);
  printSizes(files, result);
  assert.deepEqual(result.over, []);
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
  const file = (gzipBytes: number, beforeHydration: boolean, settingsOff = true): PayloadFile => ({
    url: "/build/x.js",
    rawBytes: gzipBytes * 3,
    gzipBytes,
    beforeHydration,
    settingsOff,
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
});
