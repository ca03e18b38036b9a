/**
 * The suite is a team's suite: in a copy of the project changed the way the README tells a team
 * to (three pages of ~30 lines, each with its CSS and a loader; a not-found page of the team's
 * words; a setting of its own; a host granted in `permissions.app.net`), built as `deno task test` builds, the shell's
 * tests of pages, budgets and permissions still pass. They take the pages and grants from what
 * the team wrote, never from the shell's own first page or empty set. And pages cost only where
 * they are shown: the shell's files are byte for byte this project's, each page's HTML preloads
 * its own chunk and no other page's, and each hydrates in Chromium with no console error.
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { readManifest } from "../server/build/manifest.ts";
import type { Metafile } from "esbuild";
import { MANIFEST_FILE, METAFILE_FILE, PAGES_FILE } from "../server/constants.ts";
import { readRenderedPages } from "../server/page/rendered_pages.ts";
import { startChromium } from "./support/browser.ts";
import { waitForHydration } from "./support/browser_page.ts";
import { copyProject } from "./support/dev.ts";
import { measurePayload, pageFiles } from "./support/payload.ts";
import { assertBuildCurrent, startServer } from "./support/server.ts";

/** The shell's tests that load the app's pages, hold them to budgets or read its permissions. */
const TEAM_FACING_TESTS = [
  "tests/server/define_test.ts",
  "tests/server/page/handler_test.ts",
  "tests/server/page/loader_test.ts",
  "tests/payload_test.ts",
  "tests/main_http_test.ts",
  "tests/main_static_test.ts",
  "tests/main_permissions_test.ts",
  "tests/server/lifecycle/serve_args_test.ts",
];

const PAGES = ["inbox", "reports", "settings"];
const GRANTED_HOST = "api.example.com:443";

/** A team's page of ~30 lines: its stylesheet, its loader's data, state of its own. */
function teamPage(name: string): string {
  const Name = name[0].toUpperCase() + name.slice(1);
  return `import { useState } from "react";
import type { PageProps } from "../../server/define.ts";
import "./${name}.css";

/** What the loader of /${name} gives. */
interface ${Name}Data {
  readonly title: string;
  readonly items: readonly string[];
}

/** /${name}: the loader's items; a click picks one (only hydrated code can). */
export function ${Name}Page({ data }: PageProps<${Name}Data>) {
  const [picked, setPicked] = useState("none");
  return (
    <section className="team-${name}">
      <h1>{data.title}</h1>
      <ul>
        {data.items.map((item) => (
          <li key={item}>
            <button type="button" onClick={() => setPicked(item)}>
              {item}
            </button>
          </li>
        ))}
      </ul>
      <p className="picked">team-marker-${name}: picked {picked}</p>
    </section>
  );
}
`;
}

/** Its entry in server/pages.ts, with its loader. */
function teamEntry(name: string): string {
  const Name = name[0].toUpperCase() + name.slice(1);
  return `definePage({
  path: "/${name}",
  title: "${Name}",
  loader: (req) => ({
    title: "${Name} for " + (new URL(req.url).searchParams.get("who") ?? "everyone"),
    items: ["first", "second", "third"].map((item) => \`${name}-\${item}\`),
  }),
  Page: ${Name}Page,
}),`;
}

function testTaskFlags(): string[] {
  const command = denoJson.tasks.test.command;
  const args = command.slice(command.lastIndexOf("deno test") + "deno test".length).trim();
  return args.split(/\s+/).filter((arg) => arg.startsWith("--"));
}

Deno.test({
  name: "three team pages with CSS and loaders: the shell's tests pass, the shell's bytes are " +
    "unchanged, each page preloads its own chunk only and hydrates cleanly",
  // The copy's server and Chromium are stopped before the test ends; their pipes close with them.
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await assertBuildCurrent();
    await using project = await copyProject(["tests"]);

    // The README's page step, three times, on top of whatever the team's pages are; a not-found
    // page of the team's own words, which imports CSS, as every other page module now does too.
    for (const name of PAGES) {
      await project.write(
        `client/pages/${name}.css`,
        `.team-${name} h1 { color: rgb(1, 2, 3); }\n`,
      );
      await project.write(`client/pages/${name}.tsx`, teamPage(name));
    }
    for await (const entry of Deno.readDir(`${project.dir}/client/pages`)) {
      const path = `client/pages/${entry.name}`;
      if (!entry.name.endsWith(".tsx") || PAGES.includes(entry.name.slice(0, -4))) continue;
      await project.write(path, `import "./inbox.css";\n${await project.read(path)}`);
    }
    await project.write(
      "client/pages/lost.tsx",
      'import "./inbox.css";\n\nexport function LostPage() {\n  return <h1>Lost</h1>;\n}\n',
    );
    await project.write("server/team_pages.ts", await project.read("server/pages.ts"));
    const names = PAGES.map((name) => name[0].toUpperCase() + name.slice(1));
    await project.write(
      "server/pages.ts",
      `import { definePage, definePages } from "./define.ts";
import { pages as team } from "./team_pages.ts";
import { LostPage } from "../client/pages/lost.tsx";
${PAGES.map((n, i) => `import { ${names[i]}Page } from "../client/pages/${n}.tsx";`).join("\n")}

export const pages = definePages({
  pages: [
    ...team.pages.values(),
${PAGES.map(teamEntry).join("\n")}
  ],
  notFound: { title: "Lost", Page: LostPage },
  error: team.error,
});
`,
    );

    // The README's settings step: a setting of the team's own, granted by name.
    const settings = await project.read("server/settings.ts");
    await project.write(
      "server/settings.ts",
      settings.replace(
        "defineSettings({})",
        "defineSettings({ TEAM_SUITE_RETRIES: integer(0, 10) })",
      ).replace(/^import \{ defineSettings \}/m, "import { defineSettings, integer }"),
    );
    assert.notEqual(await project.read("server/settings.ts"), settings);

    // The README's permission step: a host for the app's own code.
    const config = JSON.parse(await project.read("deno.json"));
    const app = (config.permissions ??= {}).app ??= {};
    if (app.net !== true) app.net = [...app.net ?? [], GRANTED_HOST];
    await project.write("deno.json", JSON.stringify(config, null, 2) + "\n");

    const build = await project.run(["task", "build"]);
    assert.equal(build.code, 0, build.output);
    const built = await readRenderedPages(`${project.dir}/${PAGES_FILE}`);
    assert.deepEqual(built.live.filter((path) => PAGES.includes(path.slice(1))).length, 3);
    assert.equal(built.notFound.title, "Lost");
    for (const name of PAGES) assert.match(build.output, new RegExp(`page client/pages/${name}`));

    await t.step("the shell's tests of pages, budgets and permissions pass", async () => {
      const { code, output } = await project.run([
        "test",
        ...testTaskFlags(),
        ...TEAM_FACING_TESTS,
      ]);
      assert.equal(code, 0, output);
      for (const file of TEAM_FACING_TESTS) {
        // One header per file run alone, or a file-prefixed line per test in parallel.
        const ran = `^(running \\d+ tests? from \\./${file}|\\./${file} => .* \\.\\.\\. ok)`;
        assert.match(output, new RegExp(ran, "m"), file);
      }
      assert.match(output, /^ok \| \d+ passed \| 0 failed \(/m, "none ignored or filtered out");
    });

    await t.step("the shell's JavaScript is this project's: same modules, same bytes", async () => {
      // Content hashes in chunk names differ (each names the others), so gzip may differ by a
      // byte or two per file; the code is the same, character for character in length.
      const shell = async (dir: string) => {
        const { outputs }: Metafile = JSON.parse(
          await Deno.readTextFile(`${dir}/${METAFILE_FILE}`),
        );
        const files = (await measurePayload(dir)).filter((f) => !f.page);
        return {
          // node_modules is linked into the copy: its modules resolve to this project's.
          files: files.map((f) => [
            Object.keys(outputs[`static${f.url}`].inputs).map((p) =>
              p.replace(/^.*node_modules\//, "")
            ),
            f.rawBytes,
          ]).sort((a, b) => String(a).localeCompare(String(b))),
          gzip: files.reduce((n, f) => n + f.gzipBytes, 0),
        };
      };
      const [theirs, ours] = [await shell(project.dir), await shell(".")];
      assert.deepEqual(theirs.files, ours.files);
      assert.ok(Math.abs(theirs.gzip - ours.gzip) <= 2 * ours.files.length, `${theirs.gzip} gzip`);
    });

    const server = await startServer({}, { cwd: project.dir });
    try {
      const manifest = await readManifest(`${project.dir}/${MANIFEST_FILE}`);
      const shellScripts = [manifest.script, ...manifest.preload];
      const ownFiles = (name: string) => pageFiles(manifest, `client/pages/${name}.tsx`);

      await t.step("each page preloads the shell and its own chunk, no other page's", async () => {
        for (const name of PAGES) {
          const res = await fetch(new URL(`/${name}?who=Ada`, server.url));
          const html = await res.text();
          assert.equal(res.status, 200, html);
          assert.match(html, new RegExp(`<h1>${name[0].toUpperCase()}\\w+ for Ada</h1>`));
          const preloaded = [...html.matchAll(/<link rel="modulepreload" href="([^"]+)"/g)]
            .map((m) => m[1]);
          assert.deepEqual(preloaded, [...shellScripts, ...ownFiles(name)], name);
          // The page's code is in its own files only: not the shell's, not another page's.
          for (
            const url of [
              ...shellScripts,
              ...PAGES.filter((n) => n !== name).flatMap(ownFiles),
            ]
          ) {
            const code = await Deno.readTextFile(`${project.dir}/static${url}`);
            assert.ok(!code.includes(`team-marker-${name}`), `${url} holds /${name}'s code`);
          }
          assert.ok(
            (await Promise.all(
              ownFiles(name).map((url) => Deno.readTextFile(`${project.dir}/static${url}`)),
            ))
              .some((code) => code.includes(`team-marker-${name}`)),
            `/${name}'s chunk holds its code`,
          );
        }
      });

      const started = await startChromium();
      await t.step({
        name: "in Chromium: each page hydrates with its data and styles, and no console error",
        ignore: started.chromium === null,
        fn: async () => {
          await using chromium = started.chromium!;
          for (const name of PAGES) {
            const context = await chromium.browser.newContext();
            const page = await context.newPage();
            page.setDefaultTimeout(15_000);
            const problems: string[] = [];
            page.on("console", (m) => {
              if (m.type() === "error" || /hydrat/i.test(m.text())) problems.push(m.text());
            });
            page.on("pageerror", (e) => problems.push(String(e)));
            await page.goto(new URL(`/${name}?who=Ada`, server.url).href);
            await waitForHydration(page);
            await page.click(`text=${name}-second`);
            await page.waitForSelector(`text=team-marker-${name}: picked ${name}-second`);
            const color = await page.$eval("h1", (h) => getComputedStyle(h).color);
            assert.equal(color, "rgb(1, 2, 3)", name);
            assert.deepEqual(problems, [], name);
            await context.close();
          }
        },
      });
      if (started.chromium === null) console.log(`browser step ignored: ${started.reason}`);
    } finally {
      await server.stop();
    }
  },
});
