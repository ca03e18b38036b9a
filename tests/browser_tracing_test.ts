/**
 * End-to-end in headless Chromium: performance data reaches the fake ingest through the tunnel:
 * Web Vitals on the pageload transaction (INP as its own span), and a pageload that continues
 * the trace of the server's GET /. Ignored, with the reason printed, when there is no Chromium
 * (tests/support/browser_suite.ts).
 */
import assert from "node:assert/strict";
import type { Event, SpanJSON } from "@sentry/core";
import { waitForHydration } from "./support/browser_page.ts";
import { ENVIRONMENT, startBrowserSuite } from "./support/browser_suite.ts";

const { fixture, options, openTab, waitForItem } = await startBrowserSuite();

Deno.test({
  name: "browser: Web Vitals reach the ingest: LCP, CLS, FCP, TTFB on the pageload, INP as a span",
  ...options,
  async fn() {
    const { monitored, ingest } = fixture!;
    const token = crypto.randomUUID();
    await using tab = await openTab();
    // The SDK sends no CLS at all for a page without a layout shift, so make one: once the
    // page has painted, a banner pushes the shell down (Sentry's observer reads buffered
    // entries, so this counts even if the SDK starts later).
    await tab.page.addInitScript(() => {
      addEventListener("load", () =>
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            const banner = document.createElement("div");
            banner.style.height = "80px";
            document.body.prepend(banner);
          })
        ));
    });
    await tab.page.goto(`${monitored.url}?e2e=${token}`);
    await waitForHydration(tab.page);

    // The SDK records LCP, CLS, FCP and TTFB as measurements of the pageload transaction
    // when it ends (about a second after the page goes idle).
    const pageload = await waitForItem(
      "transaction",
      (e) => e.contexts?.trace?.op === "pageload" && e.request?.url?.includes(token) === true,
    );
    const measurements = pageload.measurements ?? {};
    for (const name of ["lcp", "cls", "fcp", "ttfb"]) {
      assert.equal(
        typeof measurements[name]?.value,
        "number",
        `${name}: ${JSON.stringify(measurements)}`,
      );
    }
    assert.ok(measurements.lcp.value > 0, "the heading was painted");
    assert.equal(measurements.lcp.unit, "millisecond");
    assert.ok(measurements.cls.value > 0, "the banner's shift");

    // INP replaced FID; the SDK sends it as a standalone span, once the page is hidden (the
    // web-vitals library reports INP then), so: one interaction, then leave the page.
    await tab.page.click("h1");
    // Chromium records the interaction's timing only once the frame after it is shown: leaving
    // before then leaves no INP to report (a loaded CI machine did, and no span came).
    await tab.page.waitForFunction(() => performance.getEntriesByType("first-input").length > 0);
    await tab.page.goto("about:blank");
    const traceId = pageload.contexts?.trace?.trace_id;
    const inp = await waitForItem<SpanJSON>(
      "span",
      (s) => s.op === "ui.interaction.click" && s.trace_id === traceId,
    );
    assert.equal(typeof inp.measurements?.inp?.value, "number", JSON.stringify(inp));
    assert.equal(inp.measurements?.inp?.unit, "millisecond");
    assert.match(inp.description ?? "", /main\.shell-main > h1$/, "the element clicked");
    tab.assertOnlyTunnelPosts(monitored.url, ingest.port);
  },
});

Deno.test({
  name: "browser: the pageload transaction continues the trace of the server's GET /",
  ...options,
  async fn() {
    const { monitored, release } = fixture!;
    // Marks this page load's transactions on both sides; the route is still GET /.
    const token = crypto.randomUUID();
    await using tab = await openTab();
    await tab.page.goto(`${monitored.url}?e2e=${token}`);
    await waitForHydration(tab.page);

    // The browser's transaction carries the page's URL with the token; the server's leaves the
    // query out, so it is found by the trace the page load says it continued.
    const fromToken = (e: Event) => e.request?.url?.includes(token) === true;
    const pageload = await waitForItem(
      "transaction",
      (e) => e.contexts?.trace?.op === "pageload" && fromToken(e),
    );
    const server = await waitForItem(
      "transaction",
      (e) =>
        e.transaction === "GET /" &&
        e.contexts?.trace?.trace_id === pageload.contexts?.trace?.trace_id,
    );
    assert.equal(server.request?.url, `${monitored.url}`, "no query string from the server");
    assert.equal(server.sdk?.name, "sentry.javascript.deno");
    assert.equal(pageload.sdk?.name, "sentry.javascript.react");
    assert.equal(pageload.release, release);
    assert.equal(pageload.environment, ENVIRONMENT);
    const serverTrace = server.contexts?.trace;
    assert.match(serverTrace?.trace_id ?? "", /^[0-9a-f]{32}$/);
    assert.equal(pageload.contexts?.trace?.trace_id, serverTrace?.trace_id);
    assert.equal(pageload.contexts?.trace?.parent_span_id, serverTrace?.span_id);
    tab.assertClean();
  },
});
