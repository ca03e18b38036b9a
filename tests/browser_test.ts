/**
 * End-to-end in headless Chromium: the real `main.ts` (started like `deno task start`) with
 * SENTRY_DSN pointing at a fake ingest on 127.0.0.1, so what the browser SDK sends through the
 * tunnel and what `@sentry/deno` sends can be read back. Ignored, with the reason printed,
 * when there is no Chromium.
 */
import assert from "node:assert/strict";
import type { Event, SpanJSON } from "@sentry/core";
import type { Browser, Page, Request } from "playwright-core";
import {
  cspViolations,
  recordCspViolations,
  type RunningChromium,
  startChromium,
} from "./support/browser.ts";
import { type FakeIngest, startFakeIngest } from "./support/fake_ingest.ts";
import { type RunningServer, startServer } from "./support/server.ts";

const ENVIRONMENT = "e2e";
// Generous: each is a give-up point for a wait, never a duration the tests expect.
const WAIT_MS = 15_000;
const MONITORING_CHUNK = /\/build\/chunks\/monitoring-[^/]+\.js$/;
const MAIN_SCRIPT = /\/build\/main-[^/]+\.js$/;
const ROOT_MISSING = "#root is missing from the server-rendered page";

/** An envelope item as the ingest parsed it. */
type Item = readonly [{ readonly type?: string }, unknown];

interface Fixture {
  readonly chromium: RunningChromium;
  readonly browser: Browser;
  readonly ingest: FakeIngest;
  /** SENTRY_DSN set (to the ingest), everything traced, GET /debug/error exposed. */
  readonly monitored: RunningServer;
  /** No SENTRY_DSN: monitoring off. */
  readonly unmonitored: RunningServer;
  /** What the monitored server's /healthz reports. */
  readonly release: string;
}

const started = await startChromium();
if (started.chromium === null) console.log(`browser tests ignored: ${started.reason}`);
// One browser and two servers for the file: starting them per test would dominate the run time.
const fixture = started.chromium === null ? null : await startFixture(started.chromium);
// Playwright's connection and the shared servers start timers before the first test that
// finish inside it, which the sanitizers would report as leaks of that test.
const options = { ignore: fixture === null, sanitizeOps: false, sanitizeResources: false };

Deno.test.afterAll(async () => {
  if (fixture === null) return;
  await fixture.chromium.close();
  await Promise.all([fixture.monitored.stop(), fixture.unmonitored.stop()]);
  await fixture.ingest.close();
});

Deno.test({
  name: "browser: GET / arrives server-rendered and hydrates without console errors",
  ...options,
  async fn() {
    const { monitored } = fixture!;
    const raw = await (await fetch(monitored.url)).text();
    assert.match(
      raw,
      /<div id="root"><div class="shell" data-hydrated="false">.*<h1>It works<\/h1>/s,
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
    // The browser posts the report to Sentry's security endpoint for the app's DSN.
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

/**
 * A pass-through proxy to `target` that passes HTML pages through `rewrite`, standing in for
 * a page the server could send (a tampered or broken one) while keeping its real headers.
 */
function startRewritingProxy(target: string, rewrite: (html: string) => string) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const upstream = await fetch(new URL(url.pathname + url.search, target), {
      method: req.method,
      headers: req.headers,
      body: req.body,
    });
    if (!upstream.headers.get("content-type")?.startsWith("text/html")) return upstream;
    const html = rewrite(await upstream.text());
    const headers = new Headers(upstream.headers);
    headers.delete("content-length");
    headers.delete("content-encoding");
    return new Response(html, { status: upstream.status, headers });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

function securityReports(ingest: FakeIngest) {
  return ingest.requests.filter((r) => r.path.startsWith("/api/1/security/"));
}

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
      (html) => html.replace('<div id="root">', '<div id="not-root">'),
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
      (html) => html.replace("<h1>It works</h1>", "<h1>It worked</h1>"),
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

    const fromToken = (e: Event) => e.request?.url?.includes(token) === true;
    const server = await waitForItem(
      "transaction",
      (e) => e.transaction === "GET /" && fromToken(e),
    );
    const pageload = await waitForItem(
      "transaction",
      (e) => e.contexts?.trace?.op === "pageload" && fromToken(e),
    );
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

async function startFixture(chromium: RunningChromium): Promise<Fixture> {
  const ingest = startFakeIngest();
  const servers = await Promise.allSettled([
    startServer({
      SENTRY_DSN: ingest.dsn("public", "1"),
      SENTRY_ENVIRONMENT: ENVIRONMENT,
      SENTRY_TRACES_SAMPLE_RATE: "1",
      DEBUG_ERROR_ROUTE: "true",
    }),
    startServer(),
  ]);
  try {
    const [monitored, unmonitored] = servers.map((s) => {
      if (s.status === "rejected") throw s.reason;
      return s.value;
    });
    const health = await (await fetch(new URL("/healthz", monitored.url))).json();
    assert.equal(typeof health.release, "string");
    return {
      chromium,
      browser: chromium.browser,
      ingest,
      monitored,
      unmonitored,
      release: health.release,
    };
  } catch (error) {
    for (const s of servers) if (s.status === "fulfilled") await s.value.stop();
    await ingest.close();
    await chromium.close();
    throw error;
  }
}

/** A page in its own browser context, with everything it did recorded. */
interface Tab extends AsyncDisposable {
  readonly page: Page;
  /** Every request the page made, in order. */
  readonly requests: Request[];
  /** POSTs the page made to the app's tunnel. */
  tunnelPosts(appUrl: string): string[];
  /** No console errors, no hydration warnings, no uncaught errors, no failed requests. */
  assertClean(): void;
  /** Every `securitypolicyviolation` event the page saw, as "directive blocked-uri". */
  cspViolations(): Promise<string[]>;
  /** Every request went to the app's origin, none to the ingest, and only /monitoring got posts. */
  assertOnlyTunnelPosts(appUrl: string, ingestPort: number): void;
}

async function openTab(): Promise<Tab> {
  const context = await fixture!.browser.newContext();
  context.setDefaultTimeout(WAIT_MS);
  await recordCspViolations(context);
  const page = await context.newPage();
  const requests: Request[] = [];
  const consoleErrors: string[] = [];
  const hydrationMessages: string[] = [];
  const pageErrors: string[] = [];
  const failures: string[] = [];
  page.on("request", (r) => requests.push(r));
  page.on("console", (m) => {
    if (m.type() === "error") consoleErrors.push(m.text());
    if (/hydrat/i.test(m.text())) hydrationMessages.push(`${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => pageErrors.push(e.message));
  page.on("requestfailed", (r) => failures.push(`${r.url()}: ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400) failures.push(`${r.url()}: ${r.status()}`);
  });
  const tunnelPosts = (appUrl: string) =>
    requests.filter((r) => isTunnelPost(r, appUrl)).map((r) => r.url());
  return {
    page,
    requests,
    tunnelPosts,
    assertClean() {
      assert.deepEqual(consoleErrors, [], "console errors");
      assert.deepEqual(hydrationMessages, [], "hydration warnings");
      assert.deepEqual(pageErrors, [], "uncaught errors");
      assert.deepEqual(failures, [], "failed requests");
    },
    assertOnlyTunnelPosts(appUrl, ingestPort) {
      const origin = new URL(appUrl).origin;
      const urls = requests.map((r) => r.url());
      assert.deepEqual(urls.filter((u) => new URL(u).port === String(ingestPort)), []);
      assert.deepEqual(urls.filter((u) => new URL(u).origin !== origin), []);
      const posts = requests.filter((r) => r.method() !== "GET");
      assert.ok(posts.length > 0, "the page posted to the tunnel");
      assert.deepEqual(posts.map((r) => r.url()), tunnelPosts(appUrl));
    },
    cspViolations: () => cspViolations(page),
    [Symbol.asyncDispose]: () => context.close(),
  };
}

/**
 * Hold every request matching `pattern` until `release()` (or disposal); `held` resolves once
 * the first one is being held.
 */
async function holdRequests(page: Page, pattern: RegExp) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  let onHeld!: () => void;
  const held = new Promise<void>((resolve) => onHeld = resolve);
  await page.route(pattern, async (route) => {
    onHeld();
    await released;
    // The page may be gone by now if the test failed early.
    await route.continue().catch(() => {});
  });
  return { held, release, [Symbol.dispose]: release };
}

function waitForHydration(page: Page) {
  return page.waitForSelector('.shell[data-hydrated="true"]', { state: "attached" });
}

function isTunnelPost(request: Request, appUrl: string): boolean {
  return request.method() === "POST" && request.url() === new URL("/monitoring", appUrl).href;
}

/**
 * Wait until the ingest holds `count` envelope items of `type` whose payloads match, and return
 * them in arrival order. Waits on the ingest's own arrivals rather than sleeping.
 */
async function waitForItems<T = Event>(
  type: "event" | "transaction" | "span",
  matches: (payload: T) => boolean,
  count: number,
): Promise<T[]> {
  const { ingest } = fixture!;
  const deadline = Date.now() + WAIT_MS;
  while (true) {
    const envelopes = await ingest.envelopes();
    const items = envelopes.flatMap((envelope) => envelope[1] as readonly Item[]);
    const found = items.filter(([h, p]) => h.type === type && matches(p as T)).map(([, p]) => p);
    if (found.length >= count) return found as T[];
    const left = deadline - Date.now();
    if (left <= 0) {
      const seen = items.map(([h, p]) => `${h.type} ${describeItem(p as Event)}`);
      throw new Error(
        `${found.length} of ${count} matching ${type} items reached the ingest; it has:\n` +
          seen.join("\n"),
      );
    }
    await ingest.waitFor(envelopes.length + 1, "complete", left).catch(() => {});
  }
}

/** Wait for the first envelope item of `type` whose payload matches. */
async function waitForItem<T = Event>(
  type: "event" | "transaction" | "span",
  matches: (payload: T) => boolean,
): Promise<T> {
  return (await waitForItems(type, matches, 1))[0];
}

/** Wait for the error event whose exception has this message. */
function waitForError(message: string): Promise<Event> {
  return waitForItem("event", (e) => exceptionOf(e)?.value === message);
}

function describeItem(event: Event): string {
  const span = event as SpanJSON;
  return exceptionOf(event)?.value ?? event.transaction ?? span.op ?? "";
}

/** The event's main exception: Sentry lists linked errors (causes) before it, so it is last. */
function exceptionOf(event: Event) {
  return event.exception?.values?.at(-1);
}

function frameFunctions(event: Event): string[] {
  return exceptionOf(event)?.stacktrace?.frames?.map((f) => f.function ?? "") ?? [];
}

function assertBrowserError(event: Event): void {
  const { release } = fixture!;
  assert.equal(event.sdk?.name, "sentry.javascript.react");
  assert.equal(event.release, release);
  assert.equal(event.environment, ENVIRONMENT);
  const exception = exceptionOf(event);
  assert.equal(exception?.type, "Error");
  assert.equal(exception?.mechanism?.handled, false);
  assert.ok((exception?.stacktrace?.frames?.length ?? 0) > 0, "the exception has stack frames");
}
