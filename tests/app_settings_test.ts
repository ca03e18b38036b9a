/**
 * End-to-end: the app's own settings (server/settings.ts), declared with the shell's readers, in
 * a copy of the project served as `deno task start` serves it. A good value reaches app code as
 * its type, granted without a word in deno.json; a bad one stops start-up with one line and exit
 * 1, as the shell's own settings do; a server started without the grant says which flag it lacks.
 */
import assert from "node:assert/strict";
import { SERVER_ENV_VARIABLES } from "../server/lifecycle/config.ts";
import { copyProject } from "./support/dev.ts";
import { runServerToExit, startServer } from "./support/server.ts";

const SETTINGS = `import { defineSettings, integer, list, url } from "./lifecycle/config.ts";

export const settings = defineSettings({
  PAYMENTS_URL: url,
  RETRIES: integer(0, 10),
  REGIONS: list(url),
});
`;

const ROUTES = `import type { ApiRoutes } from "./router.ts";
import { settings } from "../settings.ts";

const retries: number | undefined = settings.RETRIES;
// @ts-expect-error: an integer setting is a number, never a string
const wrong: string | undefined = settings.RETRIES;
// @ts-expect-error: only declared settings exist
settings.UNDECLARED;

export const apiRoutes: ApiRoutes = {
  "/api/settings": { GET: () => Response.json({ ...settings, retries: (retries ?? 3) + 1 }) },
};
`;

Deno.test({
  name: "app settings: typed values granted by name; a bad value stops start-up with one line",
  // The server is stopped before the test ends; Deno's child pipes close with it.
  sanitizeResources: false,
  async fn() {
    await using project = await copyProject();
    await project.write("server/settings.ts", SETTINGS);
    await project.write("server/api/routes.ts", ROUTES);
    // Typed: each value is its reader's type (a wrong use fails `deno task check`).
    const checked = await project.run(["check", "server/api/routes.ts"]);
    assert.equal(checked.code, 0, checked.output);

    for (
      const [env, line] of [
        [{ RETRIES: "x" }, 'error: RETRIES: expected an integer from 0 to 10, got "x"'],
        [{ RETRIES: "11" }, 'error: RETRIES: expected an integer from 0 to 10, got "11"'],
        [
          { PAYMENTS_URL: "payments" },
          'error: PAYMENTS_URL: expected an http(s) URL, got "payments"',
        ],
        [
          { REGIONS: "https://eu.example, us" },
          'error: REGIONS: expected an http(s) URL, got "us"',
        ],
      ] as const
    ) {
      const { code, output } = await runServerToExit(env, undefined, project.dir);
      assert.equal(code, 1, output);
      assert.equal(output.trim(), line);
    }
    // Started some other way, without the grant: the flag it lacks.
    const bare = await runServerToExit({ RETRIES: "2" }, [
      "run",
      "--allow-net",
      "--allow-read=static",
      `--allow-env=${SERVER_ENV_VARIABLES.join(",")}`,
      "main.ts",
    ], project.dir);
    assert.equal(bare.code, 1, bare.output);
    const missing = "error: PAYMENTS_URL: missing permission --allow-env=PAYMENTS_URL";
    assert.equal(bare.output.trim(), missing);

    await project.build();
    const server = await startServer({
      PAYMENTS_URL: "https://payments.example/v1",
      RETRIES: " 4 ",
      REGIONS: "https://eu.example/,https://us.example/",
      NOT_A_SETTING: "never read",
    }, { cwd: project.dir });
    try {
      const response = await fetch(new URL("/api/settings", server.url));
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), {
        PAYMENTS_URL: "https://payments.example/v1",
        RETRIES: 4,
        REGIONS: ["https://eu.example/", "https://us.example/"],
        retries: 5,
      });
      assert.doesNotMatch(server.output(), /NOT_A_SETTING|never read/);
    } finally {
      await server.stop();
    }
    // Unset, a setting is undefined: the app's default applies.
    const unset = await startServer({}, { cwd: project.dir });
    try {
      const response = await fetch(new URL("/api/settings", unset.url));
      assert.deepEqual(await response.json(), { retries: 4 });
    } finally {
      await unset.stop();
    }
  },
});
