/**
 * The README's "Building on the shell" steps, followed literally in a copy of the project: its
 * code blocks are taken from the README and put where the text says, then the copy is built and
 * served as `deno task start` does, on 127.0.0.1 port 0.
 */
import assert from "node:assert/strict";
import { copyProject } from "./support/dev.ts";
import { collectOutput, inheritedEnv, startTaskArgs, startTaskEnv } from "./support/server.ts";

const START_TIMEOUT_MS = 30_000;

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

function insertAfter(text: string, matches: (line: string) => boolean, insert: string): string {
  const lines = text.split("\n");
  let at = -1;
  lines.forEach((line, i) => {
    if (matches(line)) at = i;
  });
  assert.ok(at >= 0, `no line to insert after for:\n${insert}`);
  lines.splice(at + 1, 0, insert.trimEnd());
  return lines.join("\n");
}

Deno.test({
  name: "README: a page, an API route and a style added as the guide says work when served",
  // The copy's server is stopped before the test ends; Deno's child pipes close with it.
  sanitizeResources: false,
  async fn() {
    const steps = guideSteps(await Deno.readTextFile("README.md"));
    await using project = await copyProject();

    // Add a page: the component file, then its import and its entry in client/routes.tsx.
    const [pageFile, importLine, entryLine] = steps.get("Add a page") ?? [];
    assert.ok(pageFile && importLine && entryLine, "three code blocks in Add a page");
    await project.write("client/pages/about.tsx", pageFile);
    let routes = await project.read("client/routes.tsx");
    routes = insertAfter(routes, (l) => l.startsWith("import "), importLine);
    routes = insertAfter(routes, (l) => l.trim() === "pages: [", entryLine);
    await project.write("client/routes.tsx", routes);

    // Add an API route: one entry in server/api/routes.ts.
    const [apiEntry] = steps.get("Add an API route") ?? [];
    assert.ok(apiEntry, "a code block in Add an API route");
    const api = await project.read("server/api/routes.ts");
    await project.write(
      "server/api/routes.ts",
      insertAfter(api, (l) => l.startsWith("export const apiRoutes"), apiEntry),
    );

    // Styles: the rule appended to client/styles.css.
    const [css] = steps.get("Styles") ?? [];
    assert.ok(css, "a code block in Styles");
    await project.write("client/styles.css", `${await project.read("client/styles.css")}\n${css}`);

    const build = await new Deno.Command(Deno.execPath(), {
      args: ["task", "build"],
      cwd: project.dir,
      env: { ...inheritedEnv(), NO_COLOR: "1" },
      clearEnv: true,
      stdin: "null",
    }).output();
    assert.equal(build.code, 0, new TextDecoder().decode(build.stderr));

    const child = new Deno.Command(Deno.execPath(), {
      args: startTaskArgs(),
      cwd: project.dir,
      env: { ...inheritedEnv(), ...startTaskEnv(), PORT: "0", HOST: "127.0.0.1", NO_COLOR: "1" },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let listening = (_: string) => {};
    const url = new Promise<string>((resolve) => listening = resolve);
    const { text, done } = collectOutput(child, () => {
      const match = /Listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(text());
      if (match) listening(match[1]);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const base = await Promise.race([
        url,
        new Promise<never>((_, reject) =>
          timer = setTimeout(() => reject(new Error(`not started:\n${text()}`)), START_TIMEOUT_MS)
        ),
      ]);
      const get = (path: string) => fetch(new URL(path, base));

      const about = await get("/about");
      assert.equal(about.status, 200);
      const html = await about.text();
      assert.match(html, /<title>About<\/title>/);
      assert.match(html, /<main class="shell-main"><h1>About this app<\/h1><\/main>/);
      const home = await get("/");
      assert.equal(home.status, 200);
      assert.match(await home.text(), /It works/);
      const missing = await get("/about/");
      assert.equal(missing.status, 404);
      assert.match(await missing.text(), /<div class="shell".*Not found/s);

      const hello = await get("/api/hello");
      assert.equal(hello.status, 200);
      assert.deepEqual(await hello.json(), { hello: "world" });
      assert.equal(hello.headers.get("x-content-type-options"), "nosniff");
      const unknown = await get("/api/nope");
      assert.equal(unknown.status, 404);
      assert.deepEqual(await unknown.json(), { error: "not found" });

      const href = /<link rel="stylesheet" href="(\/build\/main-[A-Z0-9]+\.css)">/.exec(html)?.[1];
      assert.ok(href, "the page links the hashed stylesheet");
      const stylesheet = await get(href);
      assert.match(stylesheet.headers.get("cache-control") ?? "", /immutable/);
      assert.match(await stylesheet.text(), /letter-spacing:-\.01em/);
    } finally {
      clearTimeout(timer);
      child.kill("SIGTERM");
      await child.status;
      await done;
    }
  },
});
