import assert from "node:assert/strict";
import { startupBanner } from "../../../server/lifecycle/banner.ts";
import { loadConfig } from "../../../server/lifecycle/config.ts";

const addr: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 8000 };

Deno.test("banner: where it listens, and that monitoring is off and how to turn it on", () => {
  assert.deepEqual(startupBanner(addr, loadConfig({}), "r1"), [
    "Listening on http://127.0.0.1:8000/ (release r1)",
    "Monitoring is off: set SENTRY_DSN to report errors and traces to Sentry.",
  ]);
});

Deno.test("banner: with a DSN, that monitoring is on, where to and how much, never the key", () => {
  const config = loadConfig({
    SENTRY_DSN: "https://publickey42@o7.ingest.sentry.io/4501",
    SENTRY_TRACES_SAMPLE_RATE: "0.25",
    SENTRY_ENVIRONMENT: "staging",
  });
  const lines = startupBanner(addr, config, "r2");
  assert.deepEqual(lines.slice(1), [
    "Monitoring is on: errors and 25% of page requests traced go to Sentry at " +
    "o7.ingest.sentry.io, project 4501, environment staging.",
  ]);
  assert.doesNotMatch(lines.join("\n"), /publickey42/);
  // The default rate reads as it is configured.
  const byDefault = startupBanner(addr, loadConfig({ SENTRY_DSN: "https://k@h.example/1" }), "r");
  assert.match(byDefault[1], /errors and 10% of page requests traced/);
});
