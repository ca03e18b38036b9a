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

Deno.test("the proxy hint is a line of the log's format: JSON, or text after the time", async () => {
  const { fetch, logLines } = await fixtureApp({ config: loadConfig({ LOG_FORMAT: "json" }) });
  await (await fetch("/healthz", { headers: { "x-forwarded-for": "203.0.113.7" } })).body
    ?.cancel();
  assert.equal(hint(logLines).length, 1);
  for (const line of logLines) assert.equal(typeof JSON.parse(line), "object", line);
  assert.match(JSON.parse(hint(logLines)[0]).message, /^requests from 127\.0\.0\.1 carry/);

  const text = await fixtureApp({ config: loadConfig({ LOG_FORMAT: "text" }) });
  await (await text.fetch("/healthz", { headers: { "x-forwarded-for": "203.0.113.7" } })).body
    ?.cancel();
  assert.match(hint(text.logLines)[0], /^\d{4}-\d\d-\d\dT[\d:.]+Z server requests from 127/);
});
