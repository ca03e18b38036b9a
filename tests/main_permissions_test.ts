/**
 * End-to-end: the permissions `deno task start` grants the real `main.ts` (computed from the
 * configuration, read back from the running process), and a missing one stopping start-up.
 */
import assert from "node:assert/strict";
import { CONFIG_VARIABLES, loadConfig } from "../server/lifecycle/config.ts";
import { readAppPermissions, servingArgs, V8_FLAGS } from "../server/lifecycle/serve_args.ts";
import { settings } from "../server/settings.ts";
import { runServerToExit, startServer, startTaskArgs, startTaskEnv } from "./support/server.ts";

Deno.test("the start task serves with only the permissions it needs", () => {
  // The task runs a launcher that validates the configuration and deno.json's app permissions
  // and starts main.ts with permissions computed from them; the launcher itself reads the
  // environment and deno.json, and runs the server (and ps).
  const launcher = startTaskArgs();
  assert.equal(launcher.at(-1), "server/tasks/start.ts");
  const launcherFlags = launcher.filter((a) => a.startsWith("-")).sort();
  assert.deepEqual(launcherFlags, ["--allow-env", "--allow-read=deno.json", "--allow-run"]);
  assert.equal(startTaskEnv().NODE_ENV, "production");

  const config = loadConfig({
    PORT: "8000",
    SENTRY_DSN: "https://key@o1.ingest.sentry.io/5",
    TUNNEL_ALLOWED_DSNS: "http://k2@10.0.0.7:9000/sentry/6",
  });
  assert.deepEqual(servingArgs(config), [
    "run",
    V8_FLAGS,
    // The own DSN's host without a port: @sentry/deno checks exactly that (see permissions.ts).
    "--allow-net=0.0.0.0:8000,o1.ingest.sentry.io,10.0.0.7:9000",
    "--allow-read=static",
    `--allow-env=${["NODE_ENV", ...CONFIG_VARIABLES].join(",")}`,
    "main.ts",
    "--until-stdin-closes",
  ]);
  assert.equal(servingArgs(loadConfig({ HOST: "::1", PORT: "0" }))[2], "--allow-net=[::1]:0");
});

Deno.test("the server process started by the task holds exactly those permissions", async () => {
  // The launcher's one child is the server: its flags are the computed ones, nothing more.
  // The dev switches in the environment change nothing: the launcher never reads them.
  const own = await startServer({
    SENTRY_DSN: "http://k@127.0.0.1:9/1",
    DEV_MODE: "true",
    DEV_INBOX: "true",
  });
  try {
    // Deno guards /proc behind --allow-all; ps reads it for us.
    const ps = await new Deno.Command("ps", {
      args: ["-o", "args=", "--ppid", String(own.process.pid)],
    }).output();
    const lines = new TextDecoder().decode(ps.stdout).trim().split("\n");
    assert.equal(lines.length, 1, lines.join("\n"));
    const cmdline = lines[0].split(/\s+/);
    const flags = cmdline.filter((a) => a.startsWith("--"));
    // Plus whatever the team grants its own code in deno.json's permissions.app, and the
    // variables of its settings.
    const config = loadConfig({
      PORT: "0",
      HOST: "127.0.0.1",
      SENTRY_DSN: "http://k@127.0.0.1:9/1",
    });
    const expected = servingArgs(config, await readAppPermissions(), {
      settings: Object.keys(settings),
    });
    assert.deepEqual(flags, expected.filter((a) => a.startsWith("--")));
  } finally {
    await own.stop();
  }
});

Deno.test("a missing permission stops start-up with one line naming it", async () => {
  const cases: [string[], string][] = [
    [["--allow-net", "--allow-env"], "error: missing permission --allow-read=static"],
    [["--allow-read=static", "--allow-env"], "error: missing permission --allow-net=127.0.0.1"],
    [
      ["--allow-net", "--allow-read=static", "--allow-env=PORT"],
      "error: missing permission --allow-env=",
    ],
  ];
  for (const [flags, line] of cases) {
    const { code, output } = await runServerToExit({}, ["run", ...flags, "main.ts"]);
    assert.equal(code, 1, output);
    assert.equal(output.trim().split("\n").length, 1, output);
    assert.ok(output.startsWith(line), output);
  }
});
