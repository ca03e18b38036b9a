/**
 * End-to-end: deno.json's `permissions.app` grants the app's own code what it uses, in
 * production (`deno task start`'s launcher, in a copy of the project with API routes of its
 * own): a granted variable, a granted local service and a granted system API reach an API route;
 * an ungranted one (of any kind) is a 500 and one log line naming what to add where.
 */
import assert from "node:assert/strict";
import { copyProject } from "./support/dev.ts";
import { startServer } from "./support/server.ts";

/** A local HTTP service on 127.0.0.1 that counts the requests it gets. */
function startService(answer: string) {
  let requests = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => {
    requests++;
    return new Response(answer);
  });
  return {
    host: `127.0.0.1:${server.addr.port}`,
    requests: () => requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** Resolves once `read()` matches `pattern`, or throws with what it read after 10 s. */
async function waitFor(read: () => string, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 200 && !pattern.test(read()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.match(read(), pattern);
}

Deno.test({
  name: "permissions.app: granted env, net and sys reach an API route; an ungranted one is named",
  // The server is stopped before the test ends; Deno's child pipes close with it.
  sanitizeResources: false,
  async fn() {
    await using granted = startService("pong");
    await using ungranted = startService("should never be asked");
    await using project = await copyProject();
    const denoJson = JSON.parse(await project.read("deno.json"));
    denoJson.permissions.app = {
      net: [granted.host],
      env: ["ACC_GRANTED"],
      read: [],
      sys: ["hostname"],
      run: [],
    };
    await project.write("deno.json", JSON.stringify(denoJson, null, 2));
    await project.write(
      "server/api/routes.ts",
      `import type { ApiRoutes } from "./router.ts";
export const apiRoutes: ApiRoutes = {
  "/api/env": { GET: () => Response.json({ value: Deno.env.get("ACC_GRANTED") }) },
  "/api/service": { GET: async () => new Response(await (await fetch("http://${granted.host}/")).text()) },
  "/api/env-ungranted": { GET: () => Response.json({ value: Deno.env.get("ACC_X") }) },
  "/api/service-ungranted": { GET: () => fetch("http://${ungranted.host}/") },
  "/api/hostname": { GET: () => Response.json({ value: Deno.hostname() }) },
  "/api/run-ungranted": { GET: async () => Response.json(await new Deno.Command("true").output()) },
};
`,
    );
    await project.build();

    const server = await startServer(
      { ACC_GRANTED: "granted value", ACC_X: "never read" },
      { cwd: project.dir },
    );
    try {
      const get = (path: string) => fetch(new URL(path, server.url));
      const env = await get("/api/env");
      assert.equal(env.status, 200);
      assert.deepEqual(await env.json(), { value: "granted value" });
      const service = await get("/api/service");
      assert.equal(service.status, 200);
      assert.equal(await service.text(), "pong");
      assert.equal(granted.requests(), 1);

      const envMissing = await get("/api/env-ungranted");
      assert.equal(envMissing.status, 500);
      await envMissing.body?.cancel();
      const serviceMissing = await get("/api/service-ungranted");
      assert.equal(serviceMissing.status, 500);
      await serviceMissing.body?.cancel();
      assert.equal(ungranted.requests(), 0);
      // Kinds beyond net, env and read: sys granted by name, run not at all.
      const hostname = await get("/api/hostname");
      assert.equal(hostname.status, 200);
      assert.deepEqual(await hostname.json(), { value: Deno.hostname() });
      const runMissing = await get("/api/run-ungranted");
      assert.equal(runMissing.status, 500);
      await runMissing.body?.cancel();

      const envLine = 'add "ACC_X" to permissions.app.env in deno.json';
      const netLine = `add "${ungranted.host}" to permissions.app.net in deno.json`;
      const runLine = 'add "true" to permissions.app.run in deno.json';
      await waitFor(server.output, new RegExp(netLine.replace(/[.]/g, "\\.")));
      await waitFor(server.output, new RegExp(envLine.replace(/[.]/g, "\\.")));
      await waitFor(server.output, new RegExp(runLine.replace(/[.]/g, "\\.")));
      // One line each, and no stack trace for either.
      const failures = server.output().split("\n").filter((l) => l.startsWith("request failed:"));
      assert.deepEqual(failures, [
        `request failed: no env access to "ACC_X": ${envLine}`,
        `request failed: no net access to "${ungranted.host}": ${netLine}`,
        `request failed: no run access to "true": ${runLine}`,
      ]);
      assert.doesNotMatch(server.output(), /NotCapable|never read/);
    } finally {
      await server.stop();
    }
  },
});
