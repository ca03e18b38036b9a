/**
 * `deno task dev` in headless Chromium: the open page reloads itself after a client change, a
 * build error is drawn over it with file and line, and the fix clears it; the dev client runs
 * under the page's CSP and the browser SDK reports to the inbox. Ignored, with the reason
 * printed, when there is no Chromium.
 */
import assert from "node:assert/strict";
import { cspViolations, recordCspViolations, startChromium } from "./support/browser.ts";
import { copyProject, startDev } from "./support/dev.ts";

const WAIT_MS = 15_000;
const started = await startChromium();
if (started.chromium === null) console.log(`dev browser test ignored: ${started.reason}`);

Deno.test({
  name: "browser, dev mode: live reload, the build error overlay, recovery, inbox",
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
    const connected = () =>
      page.waitForResponse((r) => r.url().endsWith("/_dev/reload") && r.status() === 200);

    let events = connected();
    await page.goto(dev.url);
    await page.waitForSelector('.shell[data-hydrated="true"]');
    await events;
    const color = () => page.$eval("h1", (h1) => getComputedStyle(h1).color);
    const before = await color();

    // A client change: the page reloads by itself with the new build.
    const css = await project.read("client/styles.css");
    events = connected();
    await project.write("client/styles.css", `${css}\n.shell-main h1 { color: rgb(1, 2, 3); }\n`);
    await page.waitForFunction(() => {
      const h1 = document.querySelector("h1");
      return h1 !== null && getComputedStyle(h1).color === "rgb(1, 2, 3)";
    });
    assert.notEqual(before, "rgb(1, 2, 3)");
    await events;

    // A build error: drawn over the page with file and line.
    const main = await project.read("client/main.tsx");
    const broken = `${main}\nconst = 1;\n`;
    const line = broken.split("\n").indexOf("const = 1;") + 1;
    await project.write("client/main.tsx", broken);
    const overlay = await page.waitForSelector("#dev-build-errors");
    const text = await overlay.textContent();
    assert.match(text ?? "", new RegExp(`client/main\\.tsx:${line}:\\d+`));
    assert.match(text ?? "", /Build failed \(1 error\)/);

    // The fix: the page reloads, without the overlay.
    await project.write("client/main.tsx", main);
    await page.waitForSelector("#dev-build-errors", { state: "detached" });
    await page.waitForSelector('.shell[data-hydrated="true"]');

    // The browser SDK is on (inbox DSN, same-origin tunnel): an error reaches the inbox.
    await page.waitForFunction(() => "__SENTRY__" in globalThis);
    await page.evaluate(() => {
      setTimeout(() => {
        throw new Error("dev browser test error");
      });
    });
    const inbox = new URL("/_dev/inbox", dev.url).href;
    let html = "";
    for (let i = 0; i < 100 && !html.includes("dev browser test error"); i++) {
      await new Promise((r) => setTimeout(r, 100));
      html = await (await fetch(inbox)).text();
    }
    assert.match(html, /error from browser[^]*Error: dev browser test error/);

    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(pageErrors.filter((e) => !e.includes("dev browser test error")), []);
    await context.close();
  },
});
