import assert from "node:assert/strict";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { fixtureApp } from "../../fixtures/app.ts";

const hint = (lines: string[]) => lines.filter((line) => /TRUST_PROXY is off/.test(line));

Deno.test("X-Forwarded-For from a private address without TRUST_PROXY is said once, with the setting", async () => {
  const { fetch, logLines } = await fixtureApp();
  await (await fetch("/healthz")).body?.cancel();
  assert.deepEqual(hint(logLines), [], "no proxy header, nothing said");
  for (let i = 0; i < 3; i++) {
    await (await fetch("/healthz", { headers: { "x-forwarded-for": "203.0.113.7" } })).body
      ?.cancel();
  }
  assert.equal(hint(logLines).length, 1);
  assert.match(hint(logLines)[0], /from 127\.0\.0\.1 .*set TRUST_PROXY=true/);

  const trusting = await fixtureApp({ config: loadConfig({ TRUST_PROXY: "true" }) });
  await (await trusting.fetch("/healthz", { headers: { "x-forwarded-for": "203.0.113.7" } }))
    .body?.cancel();
  assert.deepEqual(hint(trusting.logLines), []);
});
