/**
 * The README's "Building on the shell", followed literally in a fresh copy of the project: each
 * step's code blocks are taken from the README and put where its text says, then the copy is
 * built and served as `deno task start` does, on 127.0.0.1 port 0, with monitoring on a fake
 * ingest. What each step promises is checked over HTTP and, for the page, in Chromium (ignored,
 * with the reason, when there is none; REQUIRE_BROWSER=1 fails instead); the team's own test is
 * run in the copy with `deno task test`, as the README says. The guide's paths are its own, so it
 * passes whatever pages the project already has. (Adding a package needs the registry: not run.)
 */
import assert from "node:assert/strict";
import type { Event } from "@sentry/core";
import { copyProject } from "./support/dev.ts";
import { startServer } from "./support/server.ts";
import { startFakeIngest } from "./support/fake_ingest.ts";
import { startChromium } from "./support/browser.ts";
import { waitForHydration } from "./support/browser_page.ts";
import { measurePayload, pageFiles, type PayloadFile, readBudgets } from "./support/payload.ts";
import { readManifest } from "../server/build/manifest.ts";
import { MANIFEST_FILE } from "../server/constants.ts";

// What a team's own test imports from tests/ (support/ imports fixtures/).
const TEST_HELPERS = ["support", "fixtures"];
// The permission step's promise needs code that uses a variable, granted or not: the test's own.
const UNGRANTED = "GUIDE_UNGRANTED_KEY";
const PERMISSION_PROBES =
  `"/api/guide/granted": { GET: () => Response.json({ value: Deno.env.get("PAYMENTS_API_KEY") }) },
"/api/guide/ungranted": { GET: () => Response.json({ value: Deno.env.get("${UNGRANTED}") }) },`;
// The store step's promise: what a route sets through openStore() it gets back, after a restart too.
const STORE_PROBE = `"/api/guide/store": {
  POST: async (req) => {
    const kv = await openStore();
    await kv.set(["guide"], await req.text());
    return Response.json((await kv.get(["guide"])).value);
  },
  GET: async () => Response.json((await (await openStore()).get(["guide"])).value),
},`;
const WAIT_MS = 15_000;

/** The code blocks of each `###` step in the README's "Building on the shell" section. */
function guideSteps(readme: string): Map<string, string[]> {
  const section = readme.split("\n## Building on the shell\n")[1]?.split("\n## ")[0];
  assert.ok(section, "the README has a Building on the shell section");
  const steps = new Map<string, string[]>();
  for (const part of section.split("\n### ").slice(1)) {
    const title = part.slice(0, part.indexOf("\n"));
    const blocks = [...part.matchAll(/^( *)```\w*\n([\s\S]*?)^\1```$/gm)].map(([, indent, code]) =>
      code.split("\n").map((line) => line.slice(indent.length)).join("\n")
    );
    steps.set(title, blocks);
  }
  return steps;
}

/** `insert` after the last line that `matches`, unless `text` already has what it adds (`present`:
 * a project that followed the guide already declares its page, routes and imports). */
function insertAfter(
  text: string,
  matches: (line: string) => boolean,
  insert: string,
  present?: RegExp,
): string {
  if (present?.test(text)) return text;
  const lines = text.split("\n");
  let at = -1;
  lines.forEach((line, i) => {
    if (matches(line)) at = i;
  });
  assert.ok(at >= 0, `no line to insert after for:\n${insert}`);
  lines.splice(at + 1, 0, insert.trimEnd());
  return lines.join("\n");
}

function blocksOf(steps: Map<string, string[]>, title: string, count: number): string[] {
  const blocks = steps.get(title) ?? [];
  assert.equal(blocks.length, count, `${count} code blocks in "${title}"`);
  return blocks;
}

Deno.test({
  name: "README: every step of Building on the shell works as written",
  // The copy's server and Chromium are stopped before the test ends; their pipes close with them.
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    const steps = guideSteps(await Deno.readTextFile("README.md"));
    // The project's tests are left out but for their helpers: the copy's own test task then
    // type-checks the app, the helpers and the guide's test, not the shell's suite.
    await using project = await copyProject(["tests"]);
    for await (const entry of Deno.readDir(`${project.dir}/tests`)) {
      if (!TEST_HELPERS.includes(entry.name)) {
        await Deno.remove(`${project.dir}/tests/${entry.name}`, { recursive: true });
      }
    }

    // A page with its styles, data and a Sentry call: its files, its import and its entry (with
    // its loader) in server/pages.ts.
    const [pageFile, css, pageImport, pageEntry] = blocksOf(
      steps,
      "Add a page, with its styles and data",
      4,
    );
    await project.write("client/pages/greeting.tsx", pageFile);
    await project.write("client/pages/greeting.css", css);
    let pages = await project.read("server/pages.ts");
    pages = insertAfter(
      pages,
      (l) => l.startsWith("import "),
      pageImport,
      /^import .*\bGreetingPage\b/m,
    );
    pages = insertAfter(pages, (l) => l.trim() === "pages: [", pageEntry, /path: "\/greeting"/);
    await project.write("server/pages.ts", pages);
    // An API route, and Sentry in server code: entries in server/api/routes.ts.
    const [echo] = blocksOf(steps, "Add an API route", 1);
    const [checkoutFile, checkoutImport, checkoutEntry] = blocksOf(
      steps,
      "Use Sentry in server code",
      3,
    );
    await project.write("server/api/checkout.ts", checkoutFile);
    // Data: the store module, used by a probe route of the test's own.
    const [storeFile] = blocksOf(steps, "Keep data", 1);
    await project.write("server/store.ts", storeFile);
    let api = await project.read("server/api/routes.ts");
    const isImport = (l: string) => l.startsWith("import ");
    api = insertAfter(api, isImport, checkoutImport, /^import [^;]*\bcheckout\b/m);
    api = insertAfter(
      api,
      isImport,
      `import { openStore } from "../store.ts";`,
      /^import [^;]*\bopenStore\b/m,
    );
    const isRoutes = (l: string) => l.startsWith("export const apiRoutes");
    api = insertAfter(api, isRoutes, echo, /"\/api\/echo":/);
    api = insertAfter(api, isRoutes, checkoutEntry, /"\/api\/checkout":/);
    api = insertAfter(api, isRoutes, `${PERMISSION_PROBES}\n${STORE_PROBE}`);
    await project.write("server/api/routes.ts", api);
    // A permission: the README's `permissions` entry, in the copy's deno.json.
    const [grant, missingLine] = blocksOf(steps, "Grant your code a permission", 2);
    const config = JSON.parse(await project.read("deno.json"));
    config.permissions = JSON.parse(`{${grant}}`).permissions;
    await project.write("deno.json", JSON.stringify(config, null, 2) + "\n");
    // Public configuration: the snippet as a module of its own, which must type-check.
    const [publicSnippet] = blocksOf(steps, "Read public configuration in the browser", 1);
    await project.write("client/pages/origin.ts", `${publicSnippet}\nexport { apiOrigin };\n`);
    // A test of the team's own page and route, with the project's test helpers.
    const [ownTest] = blocksOf(steps, "Test your page and route", 1);
    await project.write("tests/greeting_test.ts", ownTest);

    const build = await project.run(["task", "build"]);
    assert.equal(build.code, 0, build.output);
    const checked = await project.run(["check", "client/pages/origin.ts", "server/pages.ts"]);
    assert.equal(checked.code, 0, checked.output);
    // The page's bytes against its budget, as the build prints them.
    assert.match(
      build.output,
      /build: page client\/pages\/greeting\.tsx: \d+\.\d KB gzip, \d+\.\d KB under its/,
    );

    await using ingest = startFakeIngest();
    await using served = await startServer({
      SENTRY_DSN: ingest.dsn("key", "5"),
      SENTRY_TRACES_SAMPLE_RATE: "1",
      PAYMENTS_API_KEY: "granted",
      [UNGRANTED]: "never read",
    }, { cwd: project.dir });
    const at = (path: string, init?: RequestInit) => fetch(new URL(path, served.url), init);
    const items = async () => {
      const all: [string, Event][] = [];
      for (const [, list] of await ingest.envelopes()) {
        for (const [header, payload] of list) all.push([String(header.type), payload as Event]);
      }
      return all;
    };

    await t.step(
      "the page: its data, head, styles and 308; its loader stays on the server",
      async () => {
        const res = await at("/greeting?name=Ada");
        assert.equal(res.status, 200);
        const html = await res.text();
        assert.match(html, /<h1 class="greeting">Hello, <!-- -->Ada<\/h1>/);
        assert.match(html, /<title>Greeting<\/title>/);
        assert.match(html, /<meta name="description" content="Says hello.">/);
        assert.match(
          html,
          /<script type="application\/json" id="page-data" nonce="[^"]+">\{"name":"Ada"\}/,
        );
        const sheets = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)];
        const styles = await Promise.all(
          sheets.map(async ([, href]) => await (await at(href)).text()),
        );
        assert.ok(styles.some((css) => /\.greeting\{color:#639\}|rgb\(102, 51, 153\)/.test(css)));
        // Its own chunk, preloaded by its HTML only: not by another page's.
        const chunk = /<div id="root" data-page="([^"]+)" data-component="GreetingPage">/.exec(html)
          ?.[1];
        assert.ok(chunk, html);
        assert.match(html, new RegExp(`<link rel="modulepreload" href="${chunk}"`));
        assert.ok(!(await (await at("/")).text()).includes(chunk), "/ does not load it");
        const slash = await at("/greeting/?name=Ada", { redirect: "manual" });
        assert.equal(slash.status, 308);
        assert.equal(slash.headers.get("location"), "/greeting?name=Ada");
        // Every file the browser can be sent: none carries the loader's code.
        for await (const file of walk(`${project.dir}/static`)) {
          const text = await Deno.readTextFile(file);
          assert.ok(!text.includes('searchParams.get("name")'), `${file} holds the loader`);
        }
      },
    );

    await t.step(
      "the API route: ctx.json() and ctx.requestId; a client's mistakes are 4xx",
      async () => {
        const json = { "content-type": "application/json" };
        const ok = await at("/api/echo", { method: "POST", headers: json, body: '{"a":1}' });
        const body = await ok.json();
        assert.deepEqual(body.got, { a: 1 });
        assert.equal(body.id, ok.headers.get("x-request-id"));
        const bad = await at("/api/echo", { method: "POST", headers: json, body: "{" });
        assert.equal(bad.status, 400);
        await bad.body?.cancel();
        const text = await at("/api/echo", { method: "POST", body: '{"a":1}' });
        assert.equal(text.status, 415);
        await text.body?.cancel();
      },
    );

    await t.step(
      "your own test of the page and the route passes with `deno task test`",
      async () => {
        const { code, output } = await project.run(["task", "test", "tests/greeting_test.ts"]);
        assert.equal(code, 0, output);
        assert.match(
          output,
          /^(running 1 test from |)\.\/tests\/greeting_test\.ts($| => )/m,
          output,
        );
        assert.match(output, /^ok \| 1 passed \| 0 failed/m, output);
      },
    );

    await t.step(
      "the permission: granted, it reaches your code; else a 500 and its log line",
      async () => {
        const granted = await at("/api/guide/granted");
        assert.deepEqual(await granted.json(), { value: "granted" });
        const missing = await at("/api/guide/ungranted");
        assert.equal(missing.status, 500);
        await missing.body?.cancel();
        const line = missingLine.trim().replaceAll("PAYMENTS_API_KEY", UNGRANTED);
        for (let i = 0; i < 100 && !served.output().includes(line); i++) {
          await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(served.output().includes(line), `"${line}" in:\n${served.output()}`);
      },
    );

    await t.step("the store: a route keeps data in data/kv.sqlite3 with the grant", async () => {
      const set = await at("/api/guide/store", { method: "POST", body: "kept" });
      assert.deepEqual(await set.json(), "kept");
      assert.deepEqual(await (await at("/api/guide/store")).json(), "kept");
      assert.ok((await Deno.stat(`${project.dir}/data/kv.sqlite3`)).isFile);
    });

    await t.step("Sentry in server code: what arrives, and what does not", async () => {
      const res = await at("/api/checkout?coupon=secret", {
        method: "POST",
        headers: { cookie: "session=s3cret", authorization: "Bearer t0ken" },
      });
      assert.deepEqual(await res.json(), { total: 42 });
      await ingest.waitFor(1, "complete", WAIT_MS);
      let event: Event | undefined;
      let transaction: Event | undefined;
      for (let i = 0; i < 100 && !(event && transaction); i++) {
        const all = await items();
        event = all.find(([type, e]) =>
          type === "event" && e.exception?.values?.[0]?.value === "card declined"
        )?.[1];
        transaction = all.find(([type, e]) =>
          type === "transaction" && e.transaction === "POST /api/checkout"
        )?.[1];
        if (!(event && transaction)) await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(event && transaction, "the error and the transaction arrived");
      assert.equal(event.tags?.plan, "pro");
      assert.equal(event.user?.id, "user-42");
      assert.match(event.request?.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/api\/checkout$/);
      assert.equal(event.contexts?.trace?.trace_id, transaction.contexts?.trace?.trace_id);
      assert.deepEqual(transaction.spans?.map((s) => s.description), ["price the cart"]);
      const sent = JSON.stringify([event, transaction]);
      for (const secret of ["s3cret", "t0ken", "coupon"]) assert.ok(!sent.includes(secret), secret);
      assert.equal(event.user?.ip_address, undefined, "no client address");
    });

    await t.step("JavaScript within deno.json's budgets: the shell's, and the page's", async () => {
      const budgets = await readBudgets(project.dir);
      const files = await measurePayload(project.dir);
      const sum = (list: PayloadFile[]) => list.reduce((n, f) => n + f.gzipBytes, 0);
      const before = sum(files.filter((f) => f.beforeHydration));
      const off = sum(files.filter((f) => f.settingsOff));
      const all = sum(files.filter((f) => !f.page));
      assert.ok(before <= budgets.beforeHydrationBytes, `${before} bytes before hydration`);
      assert.ok(off <= budgets.settingsOffBytes, `${off} bytes with every Sentry product off`);
      assert.ok(all <= budgets.allJavaScriptBytes, `${all} bytes with all of them on`);
      const manifest = await readManifest(`${project.dir}/${MANIFEST_FILE}`);
      const page = pageFiles(manifest, "client/pages/greeting.tsx");
      const bytes = sum(files.filter((f) => page.includes(f.url)));
      assert.ok(bytes > 0 && bytes <= budgets.pageBytes, `${bytes} bytes of the page's own`);
    });

    const started = await startChromium();
    await t.step({
      name:
        "in Chromium: hydrates without a mismatch, styled; a click's message joins the page load's trace",
      ignore: started.chromium === null,
      fn: async () => {
        await using chromium = started.chromium!;
        const context = await chromium.browser.newContext();
        context.setDefaultTimeout(WAIT_MS);
        const page = await context.newPage();
        const problems: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error" || /hydrat/i.test(m.text())) problems.push(m.text());
        });
        page.on("pageerror", (e) => problems.push(String(e)));
        await page.goto(new URL("/greeting?name=Ada", served.url).href);
        await waitForHydration(page);
        assert.equal(await page.textContent("h1.greeting"), "Hello, Ada");
        const color = await page.$eval("h1.greeting", (h) => getComputedStyle(h).color);
        assert.equal(color, "rgb(102, 51, 153)");
        await page.click("button");
        let message: Event | undefined;
        let pageload: Event | undefined;
        for (let i = 0; i < 300 && !(message && pageload); i++) {
          const all = await items();
          message ??= all.find(([type, e]) => type === "event" && e.message === "greeting clicked")
            ?.[1];
          pageload ??= all.find(([type, e]) =>
            type === "transaction" && e.contexts?.trace?.op === "pageload" &&
            e.request?.url?.includes("/greeting") === true
          )?.[1];
          if (!(message && pageload)) await new Promise((r) => setTimeout(r, 50));
        }
        assert.ok(message, "the click's message arrived through the tunnel");
        assert.ok(pageload, "the page load's transaction arrived");
        assert.equal(message.contexts?.trace?.trace_id, pageload.contexts?.trace?.trace_id);
        assert.deepEqual(problems, []);
        await context.close();
      },
    });
    if (started.chromium === null) console.log(`browser step ignored: ${started.reason}`);
  },
});

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) yield* walk(path);
    else if (entry.isFile && !entry.name.startsWith(".") && !/\.(br|gz|map)$/.test(entry.name)) {
      yield path;
    }
  }
}
