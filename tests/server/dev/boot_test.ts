/**
 * Dev features stay in dev: the dev modules are not in the production module graph, the inbox
 * refuses to listen where other machines can reach it, and the dev error page answers JSON
 * under /api/ and says where in the project an error is.
 */
import assert from "node:assert/strict";
import { loadConfig, StartupError } from "../../../server/lifecycle/config.ts";
import { isLoopbackHost, startDevTools } from "../../../server/dev/boot.ts";
import { servingArgs } from "../../../server/lifecycle/serve_args.ts";
import { denoFailure, errorResponse, locate } from "../../../server/dev/error_page.ts";
import { STDIN_LIFELINE_FLAG } from "../../../server/constants.ts";
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
  for (const env of [{ DEV_INBOX: "true" }, { DEV_MODE: "true" }] as Record<string, string>[]) {
    const config = loadConfig({ ...env, HOST: "0.0.0.0", PORT: "0" });
    // No stdin lifeline: no runner holds the other end here.
    const args = servingArgs(config, {}, { mode: "dev" }).filter((a) => a !== STDIN_LIFELINE_FLAG);
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

Deno.test("the error page's location: the project's first file:line:column, not a dependency's", () => {
  const root = "file:///p/";
  const output = "Listening on http://127.0.0.1:8000/\nerror: Uncaught Error: boom\n" +
    "    at f (file:///p/node_modules/.deno/x@1/index.js:1:2)\n" +
    "    at g (file:///home/u/.cache/deno/npm/y/1/index.js:3:4)\n" +
    "    at App (file:///p/client/App.tsx:10:30)\n";
  const failure = denoFailure(output, root);
  assert.equal(failure.where, "client/App.tsx:10:30");
  assert.match(failure.detail, /^error: Uncaught Error: boom\n/, "from Deno's error on");
  assert.ok(!failure.detail.includes("file:///p/"), "paths relative to the project");
  assert.equal(denoFailure("killed\n", root).where, undefined);
  assert.deepEqual(locate("at file:///p/client/main.tsx:3:4", root), {
    text: "at client/main.tsx:3:4",
    where: "client/main.tsx:3:4",
  });
});

Deno.test("the error page's text: Deno's colours (it colours even into a pipe) become plain text", () => {
  // What `deno run` prints for an uncaught error when NO_COLOR is unset.
  const coloured = "\x1b[0m\x1b[1m\x1b[31merror\x1b[0m: Uncaught (in promise) Error: boom\n" +
    'throw new Error("boom");\n\x1b[0m\x1b[31m      ^\x1b[0m\n' +
    "    at \x1b[0m\x1b[2m\x1b[38;5;245mfile:///p/\x1b[0m\x1b[0m\x1b[36mclient/App.tsx\x1b[0m:" +
    "\x1b[0m\x1b[33m10\x1b[0m:\x1b[0m\x1b[33m7\x1b[0m\n";
  const failure = denoFailure(`Listening on http://127.0.0.1:8000/\n${coloured}`, "file:///p/");
  assert.equal(failure.where, "client/App.tsx:10:7");
  assert.equal(
    failure.detail,
    'error: Uncaught (in promise) Error: boom\nthrow new Error("boom");\n      ^\n' +
      "    at client/App.tsx:10:7",
  );
});

Deno.test("the error page: HTML (500, escaped, with the dev client) and JSON under /api/", async () => {
  const failure = {
    title: "Build failed (1 error)",
    where: "client/a.tsx:1:2",
    detail: "<b>x</b>",
  };
  const page = errorResponse(new Request("http://localhost/any"), failure);
  assert.equal(page.status, 500);
  const html = await page.text();
  assert.match(html, /client\/a\.tsx:1:2/);
  assert.match(html, /&#60;b&#62;x/);
  assert.match(html, /<script type="module" src="\/_dev\/client\.js" nonce="[^"]+">/);
  assert.match(page.headers.get("content-security-policy")!, /script-src 'nonce-/);
  const api = errorResponse(new Request("http://localhost/api/x", { method: "POST" }), failure);
  assert.equal(api.status, 500);
  assert.deepEqual(await api.json(), { error: "Build failed (1 error) at client/a.tsx:1:2" });
});
