/**
 * Dev features stay in dev: the dev modules are not in the production module graph, and the
 * inbox refuses to listen where other machines can reach it.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { isLoopbackHost, startDevTools } from "../../../server/dev/boot.ts";
import { DEV_SERVER_ARGS } from "../../../server/dev/server_process.ts";
import { StartupError } from "../../../server/lifecycle/startup_error.ts";
import { runServerToExit } from "../../support/server.ts";

Deno.test("isLoopbackHost: 127.0.0.0/8, ::1 and localhost only", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) {
    assert.equal(isLoopbackHost(host), true, host);
  }
  for (const host of ["0.0.0.0", "::", "[::]", "192.168.1.5", "10.0.0.1", "example.com", ""]) {
    assert.equal(isLoopbackHost(host), false, host);
  }
});

Deno.test("startDevTools refuses the inbox on a non-loopback address, not dev mode itself", () => {
  assert.throws(
    () => startDevTools(loadConfig({ DEV_INBOX: "true", HOST: "0.0.0.0" })),
    (error) =>
      error instanceof StartupError && /^DEV_INBOX: .*HOST=127\.0\.0\.1/.test(error.message),
  );
  // Dev mode with Sentry instead of the inbox may listen anywhere (HOST=0.0.0.0 deno task dev).
  const withDsn = loadConfig({
    DEV_MODE: "true",
    SENTRY_DSN: "https://k@o1.ingest.sentry.io/2",
    HOST: "0.0.0.0",
  });
  assert.equal(startDevTools(withDsn).transport, undefined);
});

Deno.test("the dev inbox on HOST=0.0.0.0 stops start-up with one line and exit 1", async () => {
  const args = [...DEV_SERVER_ARGS];
  for (const env of [{ DEV_INBOX: "true" }, { DEV_MODE: "true" }] as Record<string, string>[]) {
    const { code, output } = await runServerToExit({ ...env, HOST: "0.0.0.0" }, args);
    assert.equal(code, 1, output);
    assert.equal(output.trim().split("\n").length, 1, output);
    assert.match(output, /^error: DEV_INBOX: the dev inbox shows monitoring data/);
  }
});

Deno.test("no dev module is in main.ts's or serve.ts's module graph", async () => {
  for (const entry of ["main.ts", "serve.ts"]) {
    const { code, stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
    }).output();
    assert.equal(code, 0);
    const graph = JSON.parse(new TextDecoder().decode(stdout));
    const files: string[] = graph.modules.map((m: { specifier: string }) => m.specifier);
    assert.ok(files.some((f) => f.endsWith("/server/lifecycle/boot.ts")), "the graph was read");
    const dev = files.filter((f) => /\/server\/dev[^/]*\.ts$/.test(f));
    assert.deepEqual(dev, [], entry);
  }
});
