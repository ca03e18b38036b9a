import assert from "node:assert/strict";
import { loadMonitoring } from "../../../server/lifecycle/boot.ts";
import * as source from "../../../server/monitoring/sentry.ts";
import { MONITORING_BUNDLE } from "../../../server/constants.ts";

// The test task builds for production first, so the bundle is there.
Deno.test("loadMonitoring: the production build's bundle, not the source, outside dev mode", async () => {
  await Deno.stat(MONITORING_BUNDLE);
  const loaded = await loadMonitoring({ devMode: false });
  assert.equal(typeof loaded.startMonitoring, "function");
  assert.notEqual(loaded.startMonitoring, source.startMonitoring);
});

Deno.test("loadMonitoring: the source in dev mode", async () => {
  const loaded = await loadMonitoring({ devMode: true });
  assert.equal(loaded.startMonitoring, source.startMonitoring);
});
