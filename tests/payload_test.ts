/**
 * Client payload budgets, measured on the production build in static/build/ (`deno task test`
 * builds it first): the JavaScript that must load before hydration (the entry script and the
 * chunks it imports statically, as the manifest lists them), and all JavaScript of the page
 * (every .js the build wrote, including the lazily loaded monitoring chunk).
 *
 * Sizes are gzip at level 9, computed here from the .js files; 1 KB = 1024 bytes.
 */
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { readManifest } from "../server/build/manifest.ts";

const KB = 1024;
/** What a budget is checked against: gzip bytes per file, and whether hydration waits for it. */
interface PayloadFile {
  readonly path: string;
  readonly rawBytes: number;
  readonly gzipBytes: number;
  readonly beforeHydration: boolean;
}

const BUDGETS = { beforeHydrationBytes: 72 * KB, allJavaScriptBytes: 120 * KB };

/**
 * The budget check: the two totals and one line per budget they exceed (none when both hold).
 * Pure, so it can be shown to fail on a payload that is too big.
 */
function checkBudgets(files: readonly PayloadFile[], budgets: typeof BUDGETS) {
  const sum = (list: readonly PayloadFile[]) => list.reduce((n, f) => n + f.gzipBytes, 0);
  const beforeHydration = sum(files.filter((f) => f.beforeHydration));
  const allJavaScript = sum(files);
  const over: string[] = [];
  const check = (what: string, total: number, budget: number) => {
    const excess = total - budget;
    if (excess <= 0) return;
    const by = `${excess} ${excess === 1 ? "byte" : "bytes"}`;
    over.push(`${what} is ${kb(total)} gzip, over its ${kb(budget)} budget by ${by}`);
  };
  check("JavaScript before hydration", beforeHydration, budgets.beforeHydrationBytes);
  check("all JavaScript", allJavaScript, budgets.allJavaScriptBytes);
  return { beforeHydration, allJavaScript, over };
}

function kb(bytes: number): string {
  return `${(bytes / KB).toFixed(1)} KB`;
}

/** Every .js file under static/build/, with its gzip size and whether hydration waits for it. */
async function measureBuild(): Promise<PayloadFile[]> {
  // Fails with "run `deno task build`" when there is no build.
  const manifest = await readManifest();
  const critical = new Set([manifest.script, ...manifest.preload]);
  const files: PayloadFile[] = [];
  for (const path of await listJs("static/build")) {
    const bytes = await Deno.readFile(path);
    files.push({
      path,
      rawBytes: bytes.byteLength,
      gzipBytes: gzipSync(bytes, { level: 9 }).byteLength,
      beforeHydration: critical.has(path.slice("static".length)),
    });
  }
  const listed = new Set(files.map((f) => f.path.slice("static".length)));
  for (const url of critical) assert.ok(listed.has(url), `${url} is in the manifest, not on disk`);
  return files;
}

async function listJs(dir: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    // Dot files are never served: the server's own monitoring bundle is not the client's.
    if (entry.name.startsWith(".")) continue;
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) found.push(...await listJs(path));
    else if (entry.isFile && entry.name.endsWith(".js")) found.push(path);
  }
  return found.sort();
}

function printSizes(files: readonly PayloadFile[], totals: ReturnType<typeof checkBudgets>) {
  const rows = files.map((f) =>
    `  ${f.beforeHydration ? "before hydration" : "lazy            "}  ` +
    `${kb(f.rawBytes).padStart(9)} raw  ${kb(f.gzipBytes).padStart(8)} gzip  ${f.path}`
  );
  console.log(
    [
      "client JavaScript (gzip -9, 1 KB = 1024 bytes):",
      ...rows,
      `  before hydration: ${kb(totals.beforeHydration)} of ${kb(BUDGETS.beforeHydrationBytes)}`,
      `  all JavaScript:   ${kb(totals.allJavaScript)} of ${kb(BUDGETS.allJavaScriptBytes)}`,
    ].join("\n"),
  );
}

Deno.test("the client build stays within its JavaScript budgets (gzip)", async () => {
  const files = await measureBuild();
  assert.ok(files.some((f) => f.beforeHydration), "no entry script found in static/build");
  const result = checkBudgets(files, BUDGETS);
  printSizes(files, result);
  assert.deepEqual(result.over, []);
});

Deno.test("the budget check fails a payload that is too big, naming the budget and by how much", () => {
  const file = (gzipBytes: number, beforeHydration: boolean): PayloadFile => ({
    path: "x.js",
    rawBytes: gzipBytes * 3,
    gzipBytes,
    beforeHydration,
  });
  // Exactly at both budgets: passes.
  const atLimit = [file(72 * KB, true), file(48 * KB, false)];
  assert.deepEqual(checkBudgets(atLimit, BUDGETS).over, []);
  // One byte over the hydration budget, which also takes the whole page one byte over.
  const tooBig = [file(72 * KB + 1, true), file(48 * KB, false)];
  const { over } = checkBudgets(tooBig, BUDGETS);
  assert.equal(over.length, 2);
  assert.match(over[0], /^JavaScript before hydration is 72\.0 KB gzip, .* by 1 byte$/);
  assert.match(over[1], /^all JavaScript is 120\.0 KB gzip, over its 120\.0 KB budget by 1 byte$/);
  // A large lazy chunk breaks only the page budget.
  const lazyTooBig = checkBudgets([file(10 * KB, true), file(111 * KB, false)], BUDGETS);
  assert.equal(lazyTooBig.over.length, 1);
  assert.match(lazyTooBig.over[0], /^all JavaScript is 121\.0 KB gzip.*by 1024 bytes$/);
});
