import assert from "node:assert/strict";
import { startChromium } from "./browser.ts";

Deno.test("startChromium: a missing Chromium is a reason to ignore, or a failure when required", async () => {
  const saved = ["REQUIRE_BROWSER", "CI"].map((name) => [name, Deno.env.get(name)] as const);
  const missing = "/nonexistent/chromium";
  try {
    Deno.env.delete("REQUIRE_BROWSER");
    Deno.env.delete("CI");
    const started = await startChromium(missing);
    assert.equal(started.chromium, null);
    assert.match(started.reason ?? "", /apt-get install -y chromium/);
    for (const [name, value] of [["REQUIRE_BROWSER", "1"], ["CI", "true"]]) {
      Deno.env.set(name, value);
      await assert.rejects(startChromium(missing), /no Chromium at \/nonexistent\/chromium/);
      Deno.env.delete(name);
    }
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) Deno.env.delete(name);
      else Deno.env.set(name, value);
    }
  }
});
