/**
 * The suite is a team's suite: in a copy of the project changed the way the README tells a team
 * to (a page that imports its own CSS, a setting of its own, a host granted in
 * `permissions.app.net`), built as `deno task test` builds, the shell's tests of pages and
 * permissions still pass. They take the pages, settings and grants from what the team wrote, never
 * from the shell's own first page or empty sets.
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { PAGES_FILE } from "../server/constants.ts";
import { readRenderedPages } from "../server/page/rendered_pages.ts";
import { copyProject } from "./support/dev.ts";

/** The shell's tests that load the app's pages or read its permissions. */
const TEAM_FACING_TESTS = [
  "tests/client/page_table_test.ts",
  "tests/server/page/handler_test.ts",
  "tests/server/page/loader_test.ts",
  "tests/main_http_test.ts",
  "tests/main_static_test.ts",
  "tests/main_permissions_test.ts",
  "tests/server/lifecycle/serve_args_test.ts",
];

const PAGE_PATH = "/team-suite-styled";
const GRANTED_HOST = "api.example.com:443";

/** `deno test`'s flags in the test task, so the copy runs as `deno task test` does. */
function testTaskFlags(): string[] {
  const command = denoJson.tasks.test.command;
  const args = command.slice(command.lastIndexOf("deno test") + "deno test".length).trim();
  return args.split(/\s+/).filter((arg) => arg.startsWith("--"));
}

Deno.test("a page importing its CSS and an app grant keep the shell's page and permission tests green", async () => {
  await using project = await copyProject(["tests"]);

  // The README's page step, on top of whatever the team's routes hold: a page with its own
  // stylesheet, and a not-found page of the team's own words. Every other page imports CSS too.
  await project.write("client/pages/styled.css", ".styled { color: rgb(1, 2, 3); }\n");
  await project.write(
    "client/pages/styled.tsx",
    `import "./styled.css";

export function StyledPage() {
  return <h1 className="styled">Styled</h1>;
}

export function LostPage() {
  return <h1 className="styled">Lost</h1>;
}
`,
  );
  for await (const entry of Deno.readDir(`${project.dir}/client/pages`)) {
    if (!entry.name.endsWith(".tsx") || entry.name === "styled.tsx") continue;
    const path = `client/pages/${entry.name}`;
    await project.write(path, `import "./styled.css";\n${await project.read(path)}`);
  }
  await project.write("client/team_routes.tsx", await project.read("client/routes.tsx"));
  await project.write(
    "client/routes.tsx",
    `import { defineRoutes } from "./page_table.ts";
import { routes as team } from "./team_routes.tsx";
import { LostPage, StyledPage } from "./pages/styled.tsx";

export const routes = defineRoutes({
  pages: [...team.pages.values(), { path: "${PAGE_PATH}", title: "Styled", Page: StyledPage }],
  notFound: { title: "Lost", Page: LostPage },
  error: team.error,
});
`,
  );

  // The README's settings step: a setting of the team's own, granted by name.
  const settings = await project.read("server/settings.ts");
  await project.write(
    "server/settings.ts",
    settings.replace("defineSettings({})", "defineSettings({ TEAM_SUITE_RETRIES: integer(0, 10) })")
      .replace(/^import \{ defineSettings \}/m, "import { defineSettings, integer }"),
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
  assert.ok(built.pages.has(PAGE_PATH), "the build rendered the team's page");
  assert.equal(built.notFound.title, "Lost");

  const { code, output } = await project.run(["test", ...testTaskFlags(), ...TEAM_FACING_TESTS]);
  assert.equal(code, 0, output);
  for (const file of TEAM_FACING_TESTS) {
    assert.match(output, new RegExp(`^running \\d+ tests? from \\./${file}$`, "m"), file);
  }
  assert.match(output, /^ok \| \d+ passed \| 0 failed \(/m, "none ignored or filtered out");
});
