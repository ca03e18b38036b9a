import assert from "node:assert/strict";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { missingPermission, runtimePermissions } from "../../../server/lifecycle/preflight.ts";

Deno.test("missingPermission: one line naming the flag for the first need not granted", () => {
  // The test runs with --allow-net=127.0.0.1 (deno task test), so any other host is missing.
  const needs = runtimePermissions(loadConfig({ HOST: "192.0.2.1", PORT: "80" }));
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
