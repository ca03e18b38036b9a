/**
 * `deno task dev` end to end, in a throwaway copy of the project: a save rebuilds and restarts
 * (the reload stream then greets open pages with a new id, so they reload); a broken build, a
 * server that cannot start, a page that throws while rendering and a loader that throws each show
 * one error page with file:line in plain text (JSON under /api/), and the next good save recovers
 * on the same port.
 * A SIGTERM to deno task, or to an npx above it, leaves none of its processes behind.
 */
import assert from "node:assert/strict";
import { stripVTControlCharacters } from "node:util";
import {
  copyProject,
  openEvents,
  type ProjectCopy,
  type RunningDev,
  startDev,
} from "../../support/dev.ts";
import { allExited, descendants, processes } from "../../support/processes.ts";

Deno.test("deno task dev: rebuild and reload, a build error's page, recovery", async () => {
  await using project = await copyProject();
  await using dev = await startDev(project.dir);
  const url = (path: string) => new URL(path, dev.url).href;
  // The app's banner, and no long command line (`deno task` echoes the task's).
  assert.match(dev.output(), /watching client\//);
  await dev.waitForOutput(/Monitoring goes to the dev inbox: http:\S+\/_dev\/inbox/);
  for (const line of dev.output().split("\n")) assert.ok(line.length <= 120, line);

  const first = await readPage(url("/"));
  // The dev client script is external and carries the request's nonce, like the app's script.
  assert.equal(first.devScript?.nonce, first.nonce);
  const devClient = await fetch(url("/_dev/client.js"));
  assert.equal(devClient.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.match(await devClient.text(), /EventSource\("\/_dev\/reload"\)/);
  // Unminified, with a linked source map that is served.
  const bundle = await (await fetch(url(first.script))).text();
  assert.match(bundle, /\n {2}\S/, "indented, not minified");
  const map = /\/\/# sourceMappingURL=(\S+)/.exec(bundle)?.[1];
  assert.ok(map, "links a source map");
  const mapResponse = await fetch(new URL(map, url(first.script)));
  await mapResponse.body?.cancel();
  assert.equal(mapResponse.status, 200);
  const firstSession = await session(url("/_dev/reload"));

  // A client change: rebuilt, served by a restarted server that greets pages with a new id.
  const main = await project.read("client/main.tsx");
  await saveAndWait(project, dev, "client/main.tsx", `${main}\nconsole.debug("dev-marker-1");\n`);
  const second = await readPage(url("/"));
  assert.notEqual(second.script, first.script);
  assert.match(await (await fetch(url(second.script))).text(), /dev-marker-1/);
  assert.notEqual(await session(url("/_dev/reload")), firstSession);

  // A syntax error: one error page (file:line, esbuild's code frame) on every page, JSON
  // under /api/, the dev routes still up.
  const broken = `${main}\nconst = "dev-marker-2";\n`;
  const line = broken.split("\n").indexOf('const = "dev-marker-2";') + 1;
  let from = dev.output().length;
  await project.write("client/main.tsx", broken);
  await dev.waitForOutput(
    new RegExp(`dev: Build failed \\(1 error\\) at client/main\\.tsx:${line}:`),
    from,
  );
  for (const path of ["/", "/any/page?x=1"]) {
    const html = await expectErrorPage(url(path), new RegExp(`client/main\\.tsx:${line}:\\d+`));
    assert.match(html, /Build failed \(1 error\)/);
    assert.match(html, /dev-marker-2/, "the code frame");
  }
  for (const method of ["GET", "POST"]) {
    const api = await fetch(url("/api/anything"), { method });
    assert.equal(api.status, 500);
    assert.equal(api.headers.get("content-type"), "application/json");
    assert.match((await api.json()).error, /^Build failed \(1 error\) at client\/main\.tsx:/);
  }
  assert.match(await (await fetch(url("/_dev/client.js"))).text(), /EventSource/);
  const errorSession = await session(url("/_dev/reload"));

  // The fix: the app again, with the fixed bundle, and a new id for the error page's pages.
  await saveAndWait(project, dev, "client/main.tsx", `${main}\nconsole.debug("dev-marker-3");\n`);
  const third = await readPage(url("/"));
  assert.match(await (await fetch(url(third.script))).text(), /dev-marker-3/);
  assert.notEqual(await session(url("/_dev/reload")), errorSession);

  // A page component that imports its own CSS: the server still renders it, and the rule is in
  // the page's stylesheet.
  await project.write("client/pages/home.css", ".dev-css-marker { color: rgb(1, 2, 3); }\n");
  const home = await project.read("client/pages/home.tsx");
  await saveAndWait(project, dev, "client/pages/home.tsx", `import "./home.css";\n${home}`);
  const styled = await fetch(url("/"));
  const styledHtml = await styled.text();
  assert.equal(styled.status, 200, styledHtml);
  const sheets = [...styledHtml.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)];
  const texts = await Promise.all(
    sheets.map(async ([, css]) => await (await fetch(url(css))).text()),
  );
  assert.ok(texts.some((css) => css.includes(".dev-css-marker")), styledHtml);

  from = dev.output().length;
  const status = await dev.stop();
  assert.equal(status.code, 0, dev.output().slice(from));
});

Deno.test("deno task dev: a server that cannot start shows its error; a page's render or loader error spares the others", async (t) => {
  await using project = await copyProject();
  // Deno colours its error output even into a pipe: the page must show it as plain text.
  await using dev = await startDev(project.dir, { color: true });
  const app = await project.read("client/App.tsx");

  await t.step("App throws while the server renders it", async () => {
    const [broken, line] = insertBefore(
      app,
      /const hydrated = useHydrated/,
      '  if (appTestAlways()) throw new Error("dev-test render boom");',
    );
    const fixed = `${broken}\nfunction appTestAlways() {\n  return true;\n}\n`;
    await serverErrorAndRecovery(project, dev, "client/App.tsx", fixed, {
      line,
      message: /Error: dev-test render boom/,
    });
  });

  await t.step("a syntax error in server/app.ts", async () => {
    const source = await project.read("server/app.ts");
    const line = source.split("\n").length + 1;
    await serverErrorAndRecovery(
      project,
      dev,
      "server/app.ts",
      `${source}\nexport const = 1;\n`,
      {
        line,
        message: /could not be parsed|SyntaxError/,
      },
    );
  });

  await t.step("a server module that throws at import", async () => {
    const source = await project.read("server/page/csp.ts");
    const line = source.split("\n").length + 1;
    const broken = `${source}\nthrow new Error("dev-test import boom");\n`;
    await serverErrorAndRecovery(project, dev, "server/page/csp.ts", broken, {
      line,
      message: /Error: dev-test import boom/,
    });
  });

  const pages = await project.read("server/pages.ts");
  await t.step("one page throws while rendering: it shows the error, the others work", async () => {
    const page = 'export function BrokenPage() {\n  throw new Error("dev-test page boom");\n}\n';
    await project.write("client/pages/broken.tsx", page);
    const withPage = pages
      .replace(/^(import .*\n)/m, '$1import { BrokenPage } from "../client/pages/broken.tsx";\n')
      .replace(/(pages: \[\n)/, '$1    { path: "/broken", title: "Broken", Page: BrokenPage },\n');
    assert.notEqual(withPage, pages);
    const from = dev.output().length;
    await saveAndWait(project, dev, "server/pages.ts", withPage);
    assert.match(
      dev.output().slice(from),
      /dev: Rendering \/broken failed at client\/pages\/broken\.tsx:2:/,
    );
    const html = await expectErrorPage(dev.url + "broken", /client\/pages\/broken\.tsx:2:\d+/);
    assert.match(html, /Error: dev-test page boom/);
    const home = await fetch(dev.url);
    assert.equal(home.status, 200);
    assert.match(await home.text(), /<div class="shell"/);
  });

  await t.step("a loader throws: its page shows the error at the loader's line", async () => {
    const loader =
      'function devTestLoader(): never {\n  throw new Error("dev-test loader boom");\n}\n';
    const withLoader = pages
      .replace(
        /^(import .*\n)/m,
        '$1import { HomePage as LoadedPage } from "../client/pages/home.tsx";\n',
      )
      .replace(
        /(pages: \[\n)/,
        '$1    definePage({ path: "/loaded", title: "Loaded", loader: devTestLoader, Page: LoadedPage }),\n',
      ) + loader;
    const line = withLoader.split("\n").indexOf('  throw new Error("dev-test loader boom");') + 1;
    const from = dev.output().length;
    await saveAndWait(project, dev, "server/pages.ts", withLoader);
    const where = new RegExp(`server/pages\\.ts:${line}:\\d+`);
    const html = await expectErrorPage(dev.url + "loaded?x=1", where);
    assert.match(html, /Loading \/loaded failed/);
    assert.match(html, /Error: dev-test loader boom/);
    assert.match(
      dev.output().slice(from),
      new RegExp(`dev: Loading /loaded failed at ${where.source}`),
    );
    const home = await fetch(dev.url);
    assert.equal(home.status, 200);
    assert.match(await home.text(), /<div class="shell"/);
  });

  const status = await dev.stop();
  assert.equal(status.code, 0, dev.output());
});

Deno.test("deno task dev: a deno.json edit restarts with its grants; a new app setting is granted", async () => {
  await using project = await copyProject();
  await using dev = await startDev(project.dir, {
    env: { DEV_TEST_GRANTED: "granted value", DEV_TEST_RETRIES: "4" },
  });
  const get = async (path: string) => {
    const response = await fetch(new URL(path, dev.url));
    return { status: response.status, body: await response.json() };
  };
  // A setting declared while dev runs: its variable is granted at the next start.
  const settings = await project.read("server/settings.ts");
  await saveAndWait(
    project,
    dev,
    "server/settings.ts",
    settings
      .replace("import { defineSettings } from", "import { defineSettings, integer } from")
      .replace("defineSettings({})", "defineSettings({ DEV_TEST_RETRIES: integer(0, 10) })"),
  );
  await saveAndWait(
    project,
    dev,
    "server/api/routes.ts",
    `import type { ApiRoutes } from "./router.ts";
import { settings } from "../settings.ts";
export const apiRoutes: ApiRoutes = {
  "/api/env": { GET: () => Response.json({ value: Deno.env.get("DEV_TEST_GRANTED") }) },
  "/api/settings": { GET: () => Response.json(settings) },
};
`,
  );
  assert.deepEqual(await get("/api/settings"), { status: 200, body: { DEV_TEST_RETRIES: 4 } });
  const from = dev.output().length;
  assert.equal((await get("/api/env")).status, 500);
  await dev.waitForOutput(/add "DEV_TEST_GRANTED" to permissions\.app\.env in deno\.json/, from);

  // The edit the log line asks for, and nothing else: no Ctrl-C, no rerun. Saved as many editors
  // save, a new file renamed over the old one; the edits below are written in place.
  const denoJson = JSON.parse(await project.read("deno.json"));
  denoJson.permissions.app.env = ["DEV_TEST_GRANTED"];
  const renamed = dev.output().length;
  await project.write("deno.json.swp", JSON.stringify(denoJson, null, 2));
  await Deno.rename(`${project.dir}/deno.json.swp`, `${project.dir}/deno.json`);
  await dev.waitForOutput(/Listening on (http:\/\/\S+\/)/, renamed);
  assert.deepEqual(await get("/api/env"), { status: 200, body: { value: "granted value" } });

  // A grant the launcher would refuse: its one line on the error page, until the next save.
  denoJson.permissions.app.write = 5;
  const before = dev.output().length;
  await project.write("deno.json", JSON.stringify(denoJson, null, 2));
  const line = "permissions.app.write in deno.json: expected a list of strings without commas";
  await dev.waitForOutput(new RegExp(`dev: ${line.replaceAll(".", "\\.")}`), before);
  const { error } = (await get("/api/env")).body;
  assert.match(error, new RegExp(`^${line.replaceAll(".", "\\.")}, or true, got 5`));
  denoJson.permissions.app.write = [];
  await saveAndWait(project, dev, "deno.json", JSON.stringify(denoJson, null, 2));
  assert.deepEqual(await get("/api/env"), { status: 200, body: { value: "granted value" } });
});

for (const underShell of [false, true]) {
  const name = underShell
    ? "SIGTERM to a sh -c above deno task (the npx case)"
    : "SIGTERM to deno task";
  Deno.test(`deno task dev: ${name} leaves no runner, server or esbuild behind`, async () => {
    await using project = await copyProject();
    await using dev = await startDev(project.dir, { underShell });
    const left = descendants(await processes(), dev.process.pid);
    const expected = [/server\/tasks\/dev\.ts$/, /\bmain\.ts\b/, /\/esbuild --service/];
    for (const pattern of underShell ? [/\btask dev$/, ...expected] : expected) {
      assert.ok(left.some((p) => pattern.test(p.args)), `${pattern} in ${JSON.stringify(left)}`);
    }
    dev.process.kill("SIGTERM");
    await allExited(left);
    await dev.stop();
    if (underShell) assert.match(dev.output(), /dev: the command that started it has ended/);
  });
}

/** Save `path` as `broken`: the error page says where and what, once; restoring it recovers. */
async function serverErrorAndRecovery(
  project: ProjectCopy,
  dev: RunningDev,
  path: string,
  broken: string,
  expected: { line: number; message: RegExp },
): Promise<void> {
  const original = await project.read(path);
  const from = dev.output().length;
  await project.write(path, broken);
  const where = new RegExp(`${path.replaceAll(".", "\\.")}:${expected.line}:\\d+`);
  await dev.waitForOutput(new RegExp(`dev: The server stopped at ${where.source}`), from);
  for (const page of ["/", "/any/other/page?x=1"]) {
    assert.match(await expectErrorPage(new URL(page, dev.url).href, where), expected.message);
  }
  const { error } = await (await fetch(new URL("/api/x", dev.url))).json();
  assert.match(error, where);
  assert.ok(!error.includes("\x1b"), error);
  // Printed once (by Deno), however often the error page is asked for.
  const printed = stripVTControlCharacters(dev.output().slice(from));
  assert.equal(printed.match(/^error: /gm)?.length, 1, printed);
  assert.equal(printed.match(/dev: The server stopped/g)?.length, 1, printed);
  // The next good save brings the server back, on the same port.
  await saveAndWait(project, dev, path, original);
  const response = await fetch(dev.url);
  assert.equal(response.status, 200);
  assert.match(await response.text(), /<div class="shell"/);
}

/** Write `path` and wait until the restarted server listens again, on the same port. */
async function saveAndWait(project: ProjectCopy, dev: RunningDev, path: string, text: string) {
  const from = dev.output().length;
  await project.write(path, text);
  const [, url] = await dev.waitForOutput(/Listening on (http:\/\/\S+\/)/, from);
  assert.equal(url, dev.url);
}

/** GET `url`: the dev error page (500) pointing at `where`, with the dev client. */
async function expectErrorPage(url: string, where: RegExp): Promise<string> {
  const response = await fetch(url);
  const html = await response.text();
  assert.equal(response.status, 500, html);
  assert.match(html, where);
  assert.ok(!html.includes("\x1b"), `no terminal escape sequences: ${JSON.stringify(html)}`);
  assert.match(html, /<script type="module" src="\/_dev\/client\.js" nonce="[^"]+">/);
  return html;
}

/** The id the reload stream greets pages with. */
async function session(url: string): Promise<string> {
  await using events = await openEvents(url);
  return (await events.next("hello")).data;
}

/** `text` with `insert` on a new line before the first line matching `before`, and its line. */
function insertBefore(text: string, before: RegExp, insert: string): [string, number] {
  const lines = text.split("\n");
  const index = lines.findIndex((line) => before.test(line));
  assert.ok(index >= 0, `${before} not found`);
  lines.splice(index, 0, insert);
  return [lines.join("\n"), index + 1];
}

interface Page {
  readonly nonce: string;
  readonly script: string;
  readonly devScript?: { readonly nonce: string };
}

async function readPage(url: string): Promise<Page> {
  const html = await (await fetch(url)).text();
  const scripts = [...html.matchAll(/<script type="module" src="([^"]+)" nonce="([^"]+)">/g)];
  const app = scripts.find(([, src]) => src.startsWith("/build/"));
  const dev = scripts.find(([, src]) => src === "/_dev/client.js");
  assert.ok(app, html);
  return { script: app[1], nonce: app[2], devScript: dev && { nonce: dev[2] } };
}
