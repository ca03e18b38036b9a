/**
 * The browser suite's shared setup: one headless Chromium, a fake ingest and two servers (the
 * real `main.ts` with SENTRY_DSN pointing at the ingest, and one without) per test file, and
 * tabs that record everything their page did. When there is no Chromium, the suite's tests are
 * ignored with the reason printed (or fail under REQUIRE_BROWSER / CI, see browser.ts).
 */
import assert from "node:assert/strict";
import type { Browser, Page, Request } from "playwright-core";
import {
  cspViolations,
  recordCspViolations,
  type RunningChromium,
  startChromium,
} from "./browser.ts";
import { type IngestChecks, ingestChecks } from "./browser_ingest.ts";
import { type FakeIngest, startFakeIngest } from "./fake_ingest.ts";
import { type RunningServer, startServer } from "./server.ts";

/** The SENTRY_ENVIRONMENT of the monitored server. */
export const ENVIRONMENT = "e2e";
/** Generous: each is a give-up point for a wait, never a duration the tests expect. */
export const WAIT_MS = 15_000;
/** The lazily loaded chunk that holds the browser SDK. */
export const MONITORING_CHUNK = /\/build\/chunks\/monitoring-[^/]+\.js$/;
/** The client's entry script, the one that hydrates. */
export const MAIN_SCRIPT = /\/build\/main-[^/]+\.js$/;

/** The browser and the servers one test file shares. */
export interface Fixture {
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

/** A test file's fixture (null when its tests are ignored), options and bound helpers. */
export interface BrowserSuite extends IngestChecks {
  readonly fixture: Fixture | null;
  /** Spread into each `Deno.test`: ignores it without a browser, and the sanitizers' setting. */
  readonly options: { ignore: boolean; sanitizeOps: boolean; sanitizeResources: boolean };
  /** A page in a fresh context of the suite's browser. */
  openTab(): Promise<Tab>;
}

/**
 * Start the browser and servers for the calling test file and stop them after its last test.
 * Call once, at the top of a browser test file.
 */
export async function startBrowserSuite(): Promise<BrowserSuite> {
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

  // Only tests that run call these, and they run only with a fixture.
  return {
    fixture,
    options,
    openTab: () => openTab(fixture!),
    ...ingestChecks(() => fixture!, ENVIRONMENT, WAIT_MS),
  };
}

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
export interface Tab extends AsyncDisposable {
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

async function openTab(fixture: Fixture): Promise<Tab> {
  const context = await fixture.browser.newContext();
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

function isTunnelPost(request: Request, appUrl: string): boolean {
  return request.method() === "POST" && request.url() === new URL("/monitoring", appUrl).href;
}
