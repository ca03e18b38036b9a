import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../../server/lifecycle/config.ts";
import {
  missingPermission,
  netHosts,
  parseAppPermissions,
  runtimePermissions,
} from "../../../server/lifecycle/permissions.ts";

Deno.test("netHosts: the listen address, then the ingests; a port-less grant covers its host", () => {
  const config = loadConfig({
    HOST: "::1",
    PORT: "8000",
    SENTRY_DSN: "https://k@o1.ingest.sentry.io/5",
    TUNNEL_ALLOWED_DSNS: "https://k2@o1.ingest.sentry.io/6,http://k3@[::2]:9000/7",
  });
  assert.deepEqual(netHosts(config), ["[::1]:8000", "o1.ingest.sentry.io", "[::2]:9000"]);
});

Deno.test("missingPermission: one line naming the flag for the first need not granted", () => {
  // The test runs with --allow-net=127.0.0.1 (deno task test), so any other host is missing.
  const needs = runtimePermissions(loadConfig({ HOST: "192.0.2.1", PORT: "80" }), "static");
  const line = missingPermission(needs);
  if (Deno.permissions.querySync({ name: "net", host: "192.0.2.1:80" }).state === "granted") {
    assert.equal(line, undefined);
  } else {
    assert.equal(
      line,
      "missing permission --allow-net=192.0.2.1:80 (needed to listen for requests)",
    );
  }
});

Deno.test("parseAppPermissions: Deno's permission-set lists under permissions.app", async () => {
  assert.deepEqual(parseAppPermissions("{}"), {});
  assert.deepEqual(parseAppPermissions('{"permissions":{"other":{"net":true}}}'), {});
  const app = { net: ["127.0.0.1:9000"], env: ["API_KEY"], read: [] };
  assert.deepEqual(parseAppPermissions(JSON.stringify({ permissions: { app } })), app);
  assert.deepEqual(parseAppPermissions('{"permissions":{"app":{"net":true}}}'), { net: true });
  // The project's own deno.json: the set is there, empty.
  const own = parseAppPermissions(
    await Deno.readTextFile(new URL("../../../deno.json", import.meta.url)),
  );
  assert.deepEqual(own, { net: [], env: [], read: [] });
});

Deno.test("parseAppPermissions: what cannot be granted stops start-up with one line", () => {
  const cases: [unknown, RegExp][] = [
    [[], /^permissions\.app in deno\.json: expected an object$/],
    [{ env: "API_KEY" }, /^permissions\.app\.env in deno\.json: expected a list of strings/],
    [
      { net: ["a.example:1,b.example:2"] },
      /^permissions\.app\.net in deno\.json: expected .*commas/,
    ],
    [{ env: [""] }, /^permissions\.app\.env in deno\.json/],
    [{ write: ["tmp"] }, /^permissions\.app\.write in deno\.json: expected one of net, env, read/],
  ];
  for (const [app, pattern] of cases) {
    assert.throws(() => parseAppPermissions(JSON.stringify({ permissions: { app } })), (e) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, pattern);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
  assert.throws(
    () => parseAppPermissions("{ // a comment\n}"),
    /^ConfigError: deno\.json: expected JSON/,
  );
});
