/**
 * `deno task dev` in headless Chromium when the server cannot start: an open page reloads into
 * the error page and the dev client draws the overlay with the file, line and message (App throws
 * while the server renders it); the fix brings the app back in the same tab, with no error of
 * the page's own and no CSP violation. Ignored, with the reason printed, when there is no
 * Chromium.
 */
import assert from "node:assert/strict";
import { cspViolations, recordCspViolations, startChromium } from "./support/browser.ts";
import { copyProject, startDev } from "./support/dev.ts";

const WAIT_MS = 20_000;
const started = await startChromium();
if (started.chromium === null) {
  console.log(`dev supervisor browser test ignored: ${started.reason}`);
}

Deno.test({
  name: "browser, dev mode: a render error in App.tsx shows in the overlay; the fix recovers",
  ignore: started.chromium === null,
  // Playwright's connection keeps timers of its own between calls.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using chromium = started.chromium!;
    await using project = await copyProject();
    await using dev = await startDev(project.dir);
    const context = await chromium.browser.newContext();
    context.setDefaultTimeout(WAIT_MS);
    await recordCspViolations(context);
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (e) => pageErrors.push(e.message));
    await page.goto(dev.url);
    await page.waitForSelector('.shell[data-hydrated="true"]');

    const app = await project.read("client/App.tsx");
    const lines = app.split("\n");
    const at = lines.findIndex((line) => /const hydrated = useHydrated/.test(line));
    lines.splice(at, 0, '  if (appTestAlways()) throw new Error("dev-test render boom");');
    await project.write(
      "client/App.tsx",
      `${lines.join("\n")}\nfunction appTestAlways() {\n  return true;\n}\n`,
    );

    // The tab finds the error page by itself and the dev client draws the overlay on it.
    const overlay = await page.waitForSelector("#dev-build-errors");
    const text = (await overlay.textContent()) ?? "";
    assert.match(text, /The server failed to start/);
    assert.match(text, new RegExp(`client/App\\.tsx:${at + 1}:\\d+`));
    assert.match(text, /Error: dev-test render boom/);
    assert.equal(await page.$(".shell"), null, "the error page, not the app");

    // The fix: the same tab reloads into the app.
    await project.write("client/App.tsx", app);
    await page.waitForSelector('.shell[data-hydrated="true"]');
    assert.equal(await page.$("#dev-build-errors"), null);

    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(pageErrors, []);
    await context.close();
  },
});
