/**
 * End-to-end in headless Chromium: errors reach the fake ingest through POST /monitoring only,
 * whether raised after the SDK has loaded, before it (buffered), when the app cannot start, or
 * by React (with its component stack); and every error in a server handler reaches it from
 * `@sentry/deno` while the client gets a bare 500. Ignored, with the reason printed, when there
 * is no Chromium (tests/support/browser_suite.ts).
 */
import assert from "node:assert/strict";
import { exceptionOf, frameFunctions } from "./support/browser_ingest.ts";
import { holdRequests, startRewritingProxy, waitForHydration } from "./support/browser_page.ts";
import {
  ENVIRONMENT,
  MAIN_SCRIPT,
  MONITORING_CHUNK,
  startBrowserSuite,
} from "./support/browser_suite.ts";

const ROOT_MISSING = "#root is missing from the server-rendered page";

const { fixture, options, openTab, waitForItem, waitForItems, waitForError, assertBrowserError } =
  await startBrowserSuite();

Deno.test({
  name: "browser: uncaught errors and rejections reach the ingest only through POST /monitoring",
  ...options,
  async fn() {
    const { monitored, ingest } = fixture!;
    await using tab = await openTab();
    // The SDK's first post (its session) shows that Sentry's own handlers are on. Any POST,
    // so a request that bypasses the tunnel fails the check below rather than this wait.
    const sentryStarted = tab.page.waitForRequest((r) => r.method() === "POST");
    await tab.page.goto(monitored.url);
    await waitForHydration(tab.page);
    await sentryStarted;

    const token = crypto.randomUUID();
    await tab.page.evaluate((message) => {
      setTimeout(function boom() {
        throw new Error(message);
      });
    }, `uncaught ${token}`);
    await tab.page.evaluate((message) => {
      Promise.reject(new Error(message));
    }, `rejected ${token}`);

    const uncaught = await waitForError(`uncaught ${token}`);
    const rejected = await waitForError(`rejected ${token}`);
    assertBrowserError(uncaught);
    assertBrowserError(rejected);
    assert.ok(frameFunctions(uncaught).includes("boom"), JSON.stringify(frameFunctions(uncaught)));
    assert.match(exceptionOf(rejected)?.mechanism?.type ?? "", /onunhandledrejection$/);
    tab.assertOnlyTunnelPosts(monitored.url, ingest.port);
  },
});

Deno.test({
  name: "browser: errors raised before the Sentry chunk has loaded are buffered, then sent",
  ...options,
  async fn() {
    const { monitored, ingest } = fixture!;
    await using tab = await openTab();
    using chunk = await holdRequests(tab.page, MONITORING_CHUNK);
    await tab.page.goto(monitored.url, { waitUntil: "commit" });
    await chunk.held;
    await waitForHydration(tab.page);

    const token = crypto.randomUUID();
    const raised = Promise.all([`early uncaught ${token}`, `early rejected ${token}`].map(
      (message) => tab.page.waitForEvent("pageerror", (e) => e.message.includes(message)),
    ));
    await tab.page.evaluate((message) => {
      setTimeout(function earlyBoom() {
        throw new Error(message);
      });
    }, `early uncaught ${token}`);
    await tab.page.evaluate((message) => {
      Promise.reject(new Error(message));
    }, `early rejected ${token}`);
    await raised;
    assert.deepEqual(tab.tunnelPosts(monitored.url), [], "nothing can be sent before the SDK");

    chunk.release();
    const uncaught = await waitForError(`early uncaught ${token}`);
    const rejected = await waitForError(`early rejected ${token}`);
    assertBrowserError(uncaught);
    assertBrowserError(rejected);
    // The mechanism names client/error_buffer.ts gives: these went through the buffer.
    assert.equal(exceptionOf(uncaught)?.mechanism?.type, "onerror");
    assert.equal(exceptionOf(rejected)?.mechanism?.type, "onunhandledrejection");
    assert.ok(frameFunctions(uncaught).includes("earlyBoom"));
    tab.assertOnlyTunnelPosts(monitored.url, ingest.port);
  },
});

Deno.test({
  name: "browser: an app that fails to start (no #root) still loads monitoring and sends the error",
  ...options,
  async fn() {
    const { monitored, ingest } = fixture!;
    // A server page without the element the entry script hydrates.
    await using proxy = startRewritingProxy(
      monitored.url,
      (html) => html.replace('<div id="root"', '<div id="not-root"'),
    );
    const token = crypto.randomUUID();
    const url = `${proxy.url}?e2e=${token}`;
    assert.doesNotMatch(await (await fetch(url)).text(), /id="root"/);

    await using tab = await openTab();
    const raised = tab.page.waitForEvent("pageerror", (e) => e.message.includes("#root"));
    await tab.page.goto(url);
    await raised;
    const event = await waitForItem(
      "event",
      (e) => exceptionOf(e)?.value === ROOT_MISSING && e.request?.url?.includes(token) === true,
    );
    assertBrowserError(event);
    assert.equal(exceptionOf(event)?.mechanism?.type, "onerror", "caught by the buffer");
    assert.equal(await tab.page.locator(".shell[data-hydrated='true']").count(), 0);
    tab.assertOnlyTunnelPosts(proxy.url, ingest.port);
  },
});

Deno.test({
  name: "browser: a React error's component stack arrives as a linked exception with frames",
  ...options,
  async fn() {
    const { monitored, ingest } = fixture!;
    // The server's text differs from what the client renders: React reports a recoverable
    // hydration error, with the component stack of the element that did not match.
    await using proxy = startRewritingProxy(
      monitored.url,
      // The first text in the page's <main>, whatever the home page says.
      (html) => html.replace(/(<main class="shell-main"><[^>]+>)([^<]+)/, "$1$2, changed"),
    );
    const token = crypto.randomUUID();
    await using tab = await openTab();
    await tab.page.goto(`${proxy.url}?e2e=${token}`);
    await waitForHydration(tab.page);

    const event = await waitForItem(
      "event",
      (e) => e.request?.url?.includes(token) === true,
    );
    const values = event.exception?.values ?? [];
    assert.equal(values.length, 2, JSON.stringify(values.map((v) => v.type)));
    // Sentry lists the cause first and the error React reported last.
    const [componentStack, reported] = values;
    assert.equal(reported.mechanism?.type, "react.recoverable");
    assert.equal(reported.mechanism?.handled, true);
    assert.ok((reported.stacktrace?.frames?.length ?? 0) > 0, "the error's own stack");
    assert.equal(componentStack.type, "React component stack");
    assert.equal(componentStack.value, reported.value);
    assert.equal(componentStack.mechanism?.type, "chained");
    assert.equal(componentStack.mechanism?.source, "cause");
    // Frames Sentry can map back through the build's source maps: the bundle's URL, line and
    // column for each component.
    const frames = componentStack.stacktrace?.frames ?? [];
    const inBundle = frames.filter((f) =>
      MAIN_SCRIPT.test(new URL(f.filename ?? "", "http://x").pathname) &&
      typeof f.lineno === "number" && typeof f.colno === "number"
    );
    assert.ok(inBundle.length > 0, JSON.stringify(frames));
    assert.equal(typeof event.contexts?.react?.componentStack, "string");
    tab.assertOnlyTunnelPosts(proxy.url, ingest.port);
  },
});

Deno.test({
  name: "browser: every error in a server handler reaches the ingest; the client gets a bare 500",
  ...options,
  async fn() {
    const { monitored, release } = fixture!;
    // Twice in a row: Sentry's dedupe integration would drop the second of two identical errors.
    for (let i = 0; i < 2; i++) {
      const res = await fetch(new URL("/debug/error", monitored.url));
      assert.equal(res.status, 500);
      const body = await res.text();
      assert.doesNotMatch(body, /Debug error|throwDebugError|\bat \S+ \(|\.ts:\d+|file:\/\//);
    }

    const message = "Debug error from GET /debug/error: server monitoring works";
    const events = await waitForItems("event", (e) => exceptionOf(e)?.value === message, 2);
    assert.notEqual(events[0].event_id, events[1].event_id);
    for (const event of events) {
      assert.equal(event.sdk?.name, "sentry.javascript.deno");
      assert.equal(event.release, release);
      assert.equal(event.environment, ENVIRONMENT);
      assert.equal(exceptionOf(event)?.type, "Error");
      assert.ok(frameFunctions(event).includes("throwDebugError"), "stack trace with the handler");
    }
  },
});
