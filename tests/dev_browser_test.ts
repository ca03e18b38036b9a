/**
 * `deno task dev` in headless Chromium: the open page reloads itself after a client change; a
 * build error and a server that cannot start each turn the same tab into the error page (file,
 * line, message), and the fix brings the app back; the dev client runs under the page's CSP and
 * the browser SDK reports to the inbox. Ignored, with the reason printed, when there is no
 * Chromium.
 */
import assert from "node:assert/strict";
import { cspViolations, recordCspViolations, startChromium } from "./support/browser.ts";
import { copyProject, startDev } from "./support/dev.ts";

const WAIT_MS = 20_000;
const started = await startChromium();
if (started.chromium === null) console.log(`dev browser test ignored: ${started.reason}`);

Deno.test({
  name:
    "browser, dev mode: live reload, the error page for a build or server error, recovery, inbox",
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
    const appBack = () => page.waitForSelector('.shell[data-hydrated="true"]');
    const errorPage = async () => (await (await page.waitForSelector("#dev-error")).textContent())!;

    let events = connected();
    await page.goto(dev.url);
    await appBack();
    await events;
    const color = () => page.$eval("h1", (h1) => getComputedStyle(h1).color);
    assert.notEqual(await color(), "rgb(1, 2, 3)");

    // A client change: the page reloads by itself with the new build.
    const css = await project.read("client/styles.css");
    events = connected();
    await project.write("client/styles.css", `${css}\n.shell-main h1 { color: rgb(1, 2, 3); }\n`);
    await page.waitForFunction(() => {
      const h1 = document.querySelector("h1");
      return h1 !== null && getComputedStyle(h1).color === "rgb(1, 2, 3)";
    });
    await events;

    // A build error: the tab becomes the error page, with file and line; the fix brings it back.
    const main = await project.read("client/main.tsx");
    const broken = `${main}\nconst = 1;\n`;
    const line = broken.split("\n").indexOf("const = 1;") + 1;
    await project.write("client/main.tsx", broken);
    const buildError = await errorPage();
    assert.match(buildError, /Build failed \(1 error\)/);
    assert.match(buildError, new RegExp(`client/main\\.tsx:${line}:\\d+`));
    await project.write("client/main.tsx", main);
    await appBack();

    // App throws while the server renders it: the same, for a server that cannot start.
    const app = await project.read("client/App.tsx");
    const lines = app.split("\n");
    const at = lines.findIndex((l) => /const hydrated = useHydrated/.test(l));
    lines.splice(at, 0, '  if (appTestAlways()) throw new Error("dev-test render boom");');
    await project.write(
      "client/App.tsx",
      `${lines.join("\n")}\nfunction appTestAlways() {\n  return true;\n}\n`,
    );
    const serverError = await errorPage();
    assert.match(serverError, /The server stopped/);
    assert.match(serverError, new RegExp(`client/App\\.tsx:${at + 1}:\\d+`));
    assert.match(serverError, /Error: dev-test render boom/);
    await project.write("client/App.tsx", app);
    await appBack();
    assert.equal(await page.$("#dev-error"), null);

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
