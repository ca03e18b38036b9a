/**
 * End-to-end in headless Chromium: the server-rendered page hydrates without errors, with and
 * without monitoring, and its Content Security Policy blocks an injected script and reports it
 * to Sentry. The real `main.ts` runs as `deno task start` runs it (tests/support/browser_suite.ts);
 * ignored, with the reason printed, when there is no Chromium.
 */
import assert from "node:assert/strict";
import { securityReports } from "./support/browser_ingest.ts";
import { holdRequests, startRewritingProxy, waitForHydration } from "./support/browser_page.ts";
import {
  MAIN_SCRIPT,
  MONITORING_CHUNK,
  startBrowserSuite,
  WAIT_MS,
} from "./support/browser_suite.ts";

const { fixture, options, openTab } = await startBrowserSuite();

Deno.test({
  name: "browser: GET / arrives server-rendered and hydrates without console errors",
  ...options,
  async fn() {
    const { monitored } = fixture!;
    const raw = await (await fetch(monitored.url)).text();
    assert.match(
      raw,
      /<div id="root"[^>]*><div class="shell" data-hydrated="false">.*<main class="shell-main">/s,
    );

    await using tab = await openTab();
    // Held so the server's element can be picked up before any JavaScript touches it.
    using main = await holdRequests(tab.page, MAIN_SCRIPT);
    await tab.page.goto(monitored.url, { waitUntil: "commit" });
    await main.held;
    const serverShell = await tab.page.waitForSelector('.shell[data-hydrated="false"]', {
      state: "attached",
    });
    main.release();
    await waitForHydration(tab.page);
    // Hydration adopts the server's DOM; a mismatch would make React render a new tree.
    assert.equal(
      await tab.page.evaluate((el) => el === document.querySelector(".shell"), serverShell),
      true,
      "the hydrated .shell is the element the server sent",
    );
    await tab.page.waitForLoadState("networkidle");
    tab.assertClean();
    assert.deepEqual(await tab.cspViolations(), [], "CSP violations with monitoring on");
    assert.ok(
      tab.requests.some((r) => MONITORING_CHUNK.test(new URL(r.url()).pathname)),
      "the Sentry chunk loaded under the CSP",
    );
  },
});

Deno.test({
  name: "browser: an injected inline script without the nonce is blocked and reported",
  ...options,
  async fn() {
    const { monitored, ingest } = fixture!;
    await using tab = await openTab();
    const reportsBefore = securityReports(ingest).length;
    // Play the attacker: a proxy in front of the app injects an inline script, without the
    // nonce, into the HTML, as a stored XSS would. (Rewriting the page with page.route also
    // blocks the script, but Chromium sends no report for a document Playwright fulfilled.)
    await using proxy = startRewritingProxy(
      monitored.url,
      (html) => html.replace("</body>", "<script>globalThis.__injected = true;</script></body>"),
    );
    await tab.page.goto(proxy.url);
    await waitForHydration(tab.page);
    assert.equal(
      await tab.page.evaluate(() => "__injected" in globalThis),
      false,
      "it did not run",
    );
    // The violation event is dispatched as a task after the script is refused.
    await tab.page.waitForFunction(() =>
      (globalThis as unknown as { __cspViolations: string[] }).__cspViolations.length > 0
    );
    assert.deepEqual(await tab.cspViolations(), ["script-src-elem inline"]);
    // The browser posts the report to the app (here through the proxy), which forwards it to
    // Sentry's security endpoint for the app's DSN.
    const deadline = Date.now() + WAIT_MS;
    while (securityReports(ingest).length === reportsBefore && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const report = securityReports(ingest).at(-1);
    assert.ok(report, "a violation report reached the ingest");
    assert.match(report.path, /^\/api\/1\/security\/\?sentry_key=public&/);
    const body = JSON.parse(new TextDecoder().decode(report.body));
    assert.equal(body["csp-report"]["blocked-uri"], "inline");
  },
});

Deno.test({
  name: "browser: without SENTRY_DSN the page hydrates cleanly and posts nothing",
  ...options,
  async fn() {
    const { unmonitored } = fixture!;
    const raw = await (await fetch(unmonitored.url)).text();
    assert.match(raw, /<script type="application\/json" id="app-config" [^>]*>\{\}<\/script>/);

    await using tab = await openTab();
    await tab.page.goto(unmonitored.url, { waitUntil: "networkidle" });
    await waitForHydration(tab.page);
    tab.assertClean();
    assert.deepEqual(await tab.cspViolations(), [], "CSP violations");
    const paths = tab.requests.map((r) => new URL(r.url()).pathname);
    assert.ok(paths.some((p) => MAIN_SCRIPT.test(p)), JSON.stringify(paths));
    assert.deepEqual(paths.filter((p) => MONITORING_CHUNK.test(p)), [], "no Sentry chunk");
    assert.deepEqual(tab.requests.filter((r) => r.method() !== "GET").map((r) => r.url()), []);
    assert.ok(!paths.includes("/monitoring"));
  },
});
