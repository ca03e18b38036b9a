/**
 * End-to-end in headless Chromium: nothing the page reports is lost while it cannot deliver.
 * Offline, or while the tunnel answers 503 (its queue full), the SDK's offline transport keeps
 * each envelope in IndexedDB and sends it once the page can (the `online` event, the next send
 * that works); a CSP violation's report reaches the ingest through the app's own origin. Ignored,
 * with the reason printed, when there is no Chromium (tests/support/browser_suite.ts).
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { exceptionOf, securityReports } from "./support/browser_ingest.ts";
import { waitForHydration } from "./support/browser_page.ts";
import { startBrowserSuite, WAIT_MS } from "./support/browser_suite.ts";

const { fixture, options, openTab, waitForItem, waitForItems } = await startBrowserSuite();

/** The envelopes the offline transport holds in IndexedDB (its database and store names), each
 * as its serialized text. */
function storedEnvelopes(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    new Promise<string[]>((resolve, reject) => {
      const open = indexedDB.open("sentry-offline");
      open.onupgradeneeded = () => open.result.createObjectStore("queue");
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const all = open.result.transaction("queue").objectStore("queue").getAll();
        const text = (value: unknown) =>
          typeof value === "string" ? value : new TextDecoder().decode(value as Uint8Array);
        all.onsuccess = () => resolve(all.result.map(text));
        all.onerror = () => reject(all.error);
        open.result.close();
      };
    })
  );
}

/** Poll until `page` holds `n` stored envelopes that contain `prefix` (beside them the page may
 * keep its own: a session update, a client report); WAIT_MS is a give-up point, not an expected
 * duration. */
async function untilStored(page: Page, n: number, prefix = ""): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (true) {
    const stored = await storedEnvelopes(page);
    const held = stored.filter((envelope) => envelope.includes(prefix)).length;
    if (held === n) return;
    // The item types of each envelope held, for the failure's message.
    const types = stored.map((e) => [...e.matchAll(/"type":"(\w+)"/g)].map((m) => m[1]).join("+"));
    assert.ok(Date.now() < deadline, `${held} of ${n} envelopes stored (${types.join(", ")})`);
    await page.waitForTimeout(50);
  }
}

/** Open the monitored app and wait until its page load reached the ingest (nothing in flight). */
async function openMonitored(page: Page): Promise<void> {
  const { monitored } = fixture!;
  const token = crypto.randomUUID();
  await page.goto(`${monitored.url}?e2e=${token}`);
  await waitForHydration(page);
  await waitForItem(
    "transaction",
    (e) => e.contexts?.trace?.op === "pageload" && e.request?.url?.includes(token) === true,
  );
}

/** Throw `count` uncaught errors from the page, each with its own message `${prefix} i`, `apartMs`
 * apart. */
function throwErrors(page: Page, prefix: string, count: number, apartMs = 0) {
  return page.evaluate(({ prefix, count, apartMs }) => {
    for (let i = 0; i < count; i++) {
      setTimeout(() => {
        throw new Error(`${prefix} ${i}`);
      }, i * apartMs);
    }
  }, { prefix, count, apartMs });
}

/** The error events whose message starts with `prefix`, once `count` of them arrived. */
async function arrived(prefix: string, count: number): Promise<string[]> {
  const events = await waitForItems(
    "event",
    (e) => exceptionOf(e)?.value?.startsWith(`${prefix} `) === true,
    count,
  );
  return events.map((e) => exceptionOf(e)!.value!).sort();
}

function names(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix} ${i}`).sort();
}

Deno.test({
  name: "browser: 30 errors thrown offline are kept, and all arrive once when back online",
  ...options,
  async fn() {
    await using tab = await openTab();
    await openMonitored(tab.page);
    const prefix = `offline ${crypto.randomUUID()}`;
    // 30 s offline at one error a second, in time scaled by 5: over 6 s, so the SDK's retry timer
    // (5 s after the first failure, then 10 s, 20 s ...) takes one back out and stores it again
    // meanwhile, as it would at 5 s and 15 s of the 30; `online` then sends them all.
    await tab.page.context().setOffline(true);
    await throwErrors(tab.page, prefix, 30, 200);
    await untilStored(tab.page, 30, prefix);
    assert.deepEqual(await arrived(prefix, 0), [], "nothing arrived while offline");
    await tab.page.context().setOffline(false);

    assert.deepEqual(await arrived(prefix, 30), names(prefix, 30));
    await untilStored(tab.page, 0);
    assert.deepEqual(await arrived(prefix, 30), names(prefix, 30), "each once");
  },
});

Deno.test({
  name: "browser: errors kept offline arrive on the next visit when the tab was closed offline",
  ...options,
  async fn() {
    await using tab = await openTab();
    await openMonitored(tab.page);
    const prefix = `next visit ${crypto.randomUUID()}`;
    const context = tab.page.context();
    await context.setOffline(true);
    await throwErrors(tab.page, prefix, 3);
    await untilStored(tab.page, 3, prefix);
    await tab.page.close();
    await context.setOffline(false);

    // A new page of the same origin (and IndexedDB): `flushAtStartup` sends what was kept.
    const next = await context.newPage();
    await next.goto(fixture!.monitored.url);
    assert.deepEqual(await arrived(prefix, 3), names(prefix, 3));
    await untilStored(next, 0, prefix);
    assert.deepEqual(await arrived(prefix, 3), names(prefix, 3), "each once");
  },
});

Deno.test({
  name: "browser: envelopes the tunnel answered 503 (its queue full) are kept and sent after",
  ...options,
  async fn() {
    const { monitored } = fixture!;
    await using tab = await openTab();
    await openMonitored(tab.page);
    const prefix = `queue full ${crypto.randomUUID()}`;
    let refused = 0;
    // A stub of the tunnel whose delivery queue is full.
    const tunnel = new URL("/monitoring", monitored.url).href;
    await tab.page.route(tunnel, (route) => {
      refused++;
      return route.fulfill({ status: 503, headers: { "retry-after": "1" }, body: "queue full\n" });
    });
    await throwErrors(tab.page, prefix, 5);
    await untilStored(tab.page, 5, prefix);
    assert.ok(refused >= 5, `${refused} envelopes answered 503`);
    await tab.page.unroute(tunnel);

    // The next send that works drains the store (so does the transport's own retry timer).
    await throwErrors(tab.page, `${prefix} live`, 1);
    assert.deepEqual(await arrived(prefix, 6), [...names(prefix, 5), `${prefix} live 0`].sort());
    await untilStored(tab.page, 0);
  },
});

Deno.test({
  name: "browser: a 429 from the tunnel is final: the envelope is not kept",
  ...options,
  async fn() {
    const { monitored } = fixture!;
    await using tab = await openTab();
    await openMonitored(tab.page);
    const tunnel = new URL("/monitoring", monitored.url).href;
    let answered = 0;
    await tab.page.route(tunnel, (route) => {
      answered++;
      return route.fulfill({ status: 429, headers: { "retry-after": "60" }, body: "slow down\n" });
    });
    await throwErrors(tab.page, `limited ${crypto.randomUUID()}`, 1);
    const deadline = Date.now() + WAIT_MS;
    while (answered === 0) {
      assert.ok(Date.now() < deadline, "the error was sent");
      await tab.page.waitForTimeout(50);
    }
    assert.deepEqual(await storedEnvelopes(tab.page), []);
  },
});

Deno.test({
  name: "browser: a CSP violation's report reaches the ingest's security endpoint through the app",
  ...options,
  async fn() {
    const { monitored, ingest } = fixture!;
    await using tab = await openTab();
    await tab.page.goto(monitored.url);
    await waitForHydration(tab.page);
    const blocked = `https://blocked.example/${crypto.randomUUID()}.png`;
    await tab.page.evaluate(
      (src) => document.body.append(Object.assign(new Image(), { src })),
      blocked,
    );

    const deadline = Date.now() + WAIT_MS;
    const report = () =>
      securityReports(ingest).find((r) => new TextDecoder().decode(r.body).includes(blocked));
    while (report() === undefined) {
      assert.ok(Date.now() < deadline, "the report reached the ingest");
      await ingest.waitFor(ingest.requests.length + 1, "complete", WAIT_MS).catch(() => {});
    }
    const { path, headers, body } = report()!;
    assert.match(path, /^\/api\/1\/security\/\?sentry_key=public&sentry_environment=e2e&/);
    assert.equal(headers.get("content-type"), "application/csp-report");
    // Sent by the app, which names the browser's address.
    assert.equal(headers.get("x-sentry-forwarded-for"), "127.0.0.1");
    const sent = JSON.parse(new TextDecoder().decode(body));
    assert.equal(sent["csp-report"]["effective-directive"], "img-src");
    const ingestPort = `:${ingest.port}/`;
    assert.deepEqual(tab.requests.map((r) => r.url()).filter((u) => u.includes(ingestPort)), []);
  },
});
