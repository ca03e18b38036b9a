/**
 * End-to-end in headless Chromium: Sentry's optional products under the page's strict CSP, each
 * through the tunnel to the fake ingest: Session Replay (whole sessions, and on error), User
 * Feedback, browser profiling and logs; with their settings off, none of their code is fetched.
 * The products run in a copy of the project whose home page uses client/sentry.ts's logger and
 * feedback form, as app code would. Ignored, with the reason printed, when there is no Chromium
 * (tests/support/browser_suite.ts).
 */
import assert from "node:assert/strict";
import type { Envelope, Event, ReplayEvent } from "@sentry/core";
import { securityReports } from "./support/browser_ingest.ts";
import { waitForHydration } from "./support/browser_page.ts";
import { ENVIRONMENT, startBrowserSuite, type Tab, WAIT_MS } from "./support/browser_suite.ts";
import { copyProject } from "./support/dev.ts";
import type { FakeIngest } from "./support/fake_ingest.ts";
import { readManifest } from "../server/build/manifest.ts";
import { MANIFEST_FILE } from "../server/constants.ts";
import { measurePayload, pageFiles, pageModuleOf } from "./support/payload.ts";
import { type RunningServer, startServer } from "./support/server.ts";

const { fixture, options, openTab, waitForItem, waitForItems, waitForError } =
  await startBrowserSuite();

// What the copy's home page does with client/sentry.ts.
const HOME_PAGE = `import { useEffect } from "react";
import * as Sentry from "../sentry.ts";

export function HomePage() {
  useEffect(() => Sentry.logger.info("home page shown", { query: location.search }), []);
  return (
    <>
      <h1>It works</h1>
      <button type="button" onClick={() => Sentry.openFeedbackForm()}>Send feedback</button>
    </>
  );
}
`;

/** The copy, built, and its two servers: every product on, and Replay only on error. */
async function startProducts(ingest: FakeIngest) {
  const project = await copyProject();
  const servers: RunningServer[] = [];
  try {
    await project.write("client/pages/home.tsx", HOME_PAGE);
    await project.build();
    const env = (products: Record<string, string>) => ({
      SENTRY_DSN: ingest.dsn("public", "1"),
      SENTRY_ENVIRONMENT: ENVIRONMENT,
      SENTRY_TRACES_SAMPLE_RATE: "1",
      ...products,
    });
    const everyProduct = {
      SENTRY_REPLAYS_SESSION_SAMPLE_RATE: "1",
      SENTRY_PROFILES_SAMPLE_RATE: "1",
      SENTRY_ENABLE_LOGS: "true",
      SENTRY_FEEDBACK: "true",
    };
    const onErrorOnly = { SENTRY_REPLAYS_ON_ERROR_SAMPLE_RATE: "1" };
    for (const products of [everyProduct, onErrorOnly]) {
      servers.push(await startServer(env(products), { cwd: project.dir }));
    }
  } catch (error) {
    for (const server of servers) await server.stop();
    await project[Symbol.asyncDispose]();
    throw error;
  }
  const [allOn, onError] = servers;
  return { project, allOn, onError };
}

const products = fixture && await startProducts(fixture.ingest);
Deno.test.afterAll(async () => {
  if (!products) return;
  await Promise.all([products.allOn.stop(), products.onError.stop()]);
  await products.project[Symbol.asyncDispose]();
});

/** The URL paths of the JavaScript the tab fetched. */
function scriptsFetched(tab: Tab): string[] {
  const paths = tab.requests.map((r) => new URL(r.url()).pathname);
  return [...new Set(paths.filter((p) => p.endsWith(".js")))].sort();
}

/** Open `url` with a token in its query, wait for hydration, and return the token. */
async function openPage(tab: Tab, url: string): Promise<string> {
  const token = crypto.randomUUID();
  await tab.page.goto(`${url}?e2e=${token}`);
  await waitForHydration(tab.page);
  return token;
}

function waitForPageload(token: string): Promise<Event> {
  return waitForItem(
    "transaction",
    (e) => e.contexts?.trace?.op === "pageload" && e.request?.url?.includes(token) === true,
  );
}

/** The envelope that carries the replay segment `replayId`'s event, and its recording's bytes. */
async function replayRecording(ingest: FakeIngest, replayId: string) {
  const envelopes: Envelope[] = await ingest.envelopes();
  const envelope = envelopes.find(([, items]) =>
    items.some(([h, p]) => h.type === "replay_event" && (p as ReplayEvent).replay_id === replayId)
  );
  const recording = envelope?.[1].find(([h]) => h.type === "replay_recording")?.[1];
  assert.ok(recording instanceof Uint8Array, "the replay's recording came with its event");
  return recording;
}

/** A recording segment: a JSON header line, then the rrweb events deflated by the worker. */
async function inflateRecording(recording: Uint8Array): Promise<unknown[]> {
  const body = recording.slice(recording.indexOf(0x0a) + 1);
  assert.equal(body[0], 0x78, "a zlib stream, as the compression worker writes it");
  const inflated = new Blob([body]).stream().pipeThrough(new DecompressionStream("deflate"));
  return JSON.parse(await new Response(inflated).text());
}

Deno.test({
  name:
    "browser: with every product off, none of their code is fetched and no Document-Policy sent",
  ...options,
  async fn() {
    const { monitored } = fixture!;
    const res = await fetch(monitored.url);
    assert.equal(res.headers.get("document-policy"), null);
    const html = await res.text();
    assert.doesNotMatch(html, /replay|feedback|profiles|enableLogs/i);
    const manifest = await readManifest();

    await using tab = await openTab();
    const sentryStarted = tab.page.waitForRequest((r) => r.method() === "POST");
    await tab.page.goto(monitored.url);
    await waitForHydration(tab.page);
    await sentryStarted;
    await tab.page.waitForLoadState("networkidle");
    const off = (await measurePayload()).filter((f) => f.settingsOff).map((f) => f.url);
    // The shell's with every product off, and the page's own chunk.
    const page = pageFiles(manifest, pageModuleOf(html, manifest));
    assert.deepEqual(scriptsFetched(tab), [...off, ...page].sort(), "what the budgets count");
    assert.deepEqual(await tab.cspViolations(), []);
  },
});

Deno.test({
  name: "browser: Session Replay sends the whole session, compressed by its worker from 'self'",
  ...options,
  async fn() {
    const { ingest } = fixture!;
    const { allOn, project } = products!;
    await using tab = await openTab();
    const worker = tab.page.waitForRequest((r) => /\/build\/replay-worker-\w+\.js$/.test(r.url()));
    const token = await openPage(tab, allOn.url);
    assert.equal(new URL((await worker).url()).origin, new URL(allOn.url).origin);
    await tab.page.click("h1");

    const replay = await waitForItem<ReplayEvent>(
      "replay_event",
      (r) => r.urls?.some((url) => url.includes(token)) === true,
    );
    assert.equal(replay.replay_type, "session");
    const events = await inflateRecording(await replayRecording(ingest, replay.replay_id));
    assert.ok(events.some((e) => (e as { type?: number }).type === 2), "a full snapshot");

    // Every product's chunk and the page's own, and nothing the build does not list.
    const manifest = await readManifest(`${project.dir}/${MANIFEST_FILE}`);
    const html = await (await fetch(allOn.url)).text();
    const page = pageFiles(manifest, pageModuleOf(html, manifest));
    const shell = (await measurePayload(project.dir)).filter((f) => !f.page).map((f) => f.url);
    assert.deepEqual(scriptsFetched(tab), [...shell, ...page].sort());
    tab.assertOnlyTunnelPosts(allOn.url, ingest.port);
    assert.deepEqual(await tab.cspViolations(), []);
    tab.assertClean();
  },
});

Deno.test({
  name: "browser: with only the on-error rate, an error sends the replay before it, and names it",
  ...options,
  async fn() {
    const { ingest } = fixture!;
    const { onError } = products!;
    await using tab = await openTab();
    // Replay records into its worker from the start, sending nothing until an error.
    const worker = tab.page.waitForRequest((r) => /\/build\/replay-worker-\w+\.js$/.test(r.url()));
    await openPage(tab, onError.url);
    await worker;
    const message = `with a replay ${crypto.randomUUID()}`;
    await tab.page.evaluate((message) => {
      setTimeout(() => {
        throw new Error(message);
      });
    }, message);

    const error = await waitForError(message);
    const replayId = error.tags?.replayId as string | undefined;
    assert.match(replayId ?? "", /^[0-9a-f]{32}$/, JSON.stringify(error.tags));
    const replay = await waitForItem<ReplayEvent>("replay_event", (r) => r.replay_id === replayId);
    assert.equal(replay.replay_type, "buffer");
    assert.ok((await inflateRecording(await replayRecording(ingest, replayId!))).length > 0);
    assert.deepEqual(await tab.cspViolations(), []);
  },
});

Deno.test({
  name: "browser: the feedback button is styled under the CSP; a sent form joins the page's trace",
  ...options,
  async fn() {
    const { ingest } = fixture!;
    const { allOn } = products!;
    await using tab = await openTab();
    const reportsBefore = securityReports(ingest).length;
    const token = await openPage(tab, allOn.url);
    // Playwright's CSS selectors reach into Feedback's open shadow root.
    const button = tab.page.locator("#sentry-feedback .widget__actor");
    await button.waitFor();
    assert.equal(await button.evaluate((el) => getComputedStyle(el).position), "fixed");

    // Opened by app code, through client/sentry.ts.
    await tab.page.click("text=Send feedback");
    const message = `the cart is slow ${token}`;
    await tab.page.fill("#sentry-feedback textarea[name=message]", message);
    await tab.page.click("#sentry-feedback button[type=submit]");
    const feedback = await waitForItem(
      "feedback",
      (f) => f.contexts?.feedback?.message === message,
    );
    const pageload = await waitForPageload(token);
    assert.equal(feedback.contexts?.trace?.trace_id, pageload.contexts?.trace?.trace_id);
    assert.deepEqual(await tab.cspViolations(), []);
    assert.equal(securityReports(ingest).length, reportsBefore, "no CSP report");
  },
});

Deno.test({
  name: "browser: Feedback's screenshot is taken under the CSP and Permissions-Policy, no error",
  ...options,
  async fn() {
    const { allOn } = products!;
    await using tab = await openTab();
    await openPage(tab, allOn.url);
    await tab.page.click("text=Send feedback");
    await tab.page.click("#sentry-feedback >> text=Add a screenshot");
    // The editor shows the captured tab; a refused capture shows an error and no editor.
    await tab.page.locator("#sentry-feedback .editor canvas").first().waitFor();
    await tab.page.locator("#sentry-feedback >> text=Remove screenshot").waitFor();
    assert.equal(await tab.page.locator("#sentry-feedback .form__error-container").count(), 0);
    assert.deepEqual(await tab.cspViolations(), []);
    tab.assertClean(); // no "Permissions policy violation: camera is not allowed" either
  },
});

Deno.test({
  name: "browser: Replay keeps sending segments after an outage the tunnel answered 2xx through",
  ...options,
  async fn() {
    const { allOn } = products!;
    await using tab = await openTab();
    const token = await openPage(tab, allOn.url);
    const first = await waitForItem<ReplayEvent>(
      "replay_event",
      (r) => r.urls?.some((url) => url.includes(token)) === true,
    );
    const segments = (min: number) =>
      waitForItem<ReplayEvent>(
        "replay_event",
        (r) => r.replay_id === first.replay_id && (r.segment_id ?? 0) >= min,
      );
    // A stand-in for the delivery queue while the ingest is down: 2xx at once, the envelopes
    // kept, and delivered in order once it is back.
    const tunnel = new URL("/monitoring", allOn.url).href;
    const held: Uint8Array[] = [];
    await tab.page.route(tunnel, (route) => {
      held.push(route.request().postDataBuffer() ?? new Uint8Array());
      return route.fulfill({ status: 200, contentType: "application/json", body: "{}" });
    });
    const replayHeld = () => held.some((b) => new TextDecoder().decode(b).includes("replay_event"));
    const deadline = Date.now() + WAIT_MS;
    while (!replayHeld()) {
      assert.ok(Date.now() < deadline, "a replay segment was sent during the outage");
      await tab.page.click("h1");
      await tab.page.waitForTimeout(200);
    }
    await tab.page.unroute(tunnel);
    for (const body of held) {
      const res = await fetch(tunnel, { method: "POST", body: new Uint8Array(body) });
      await res.body?.cancel();
      assert.equal(res.status, 200);
    }
    const during = Math.max(
      ...held.flatMap((b) => [...new TextDecoder().decode(b).matchAll(/"segment_id":(\d+)/g)])
        .map((m) => Number(m[1])),
    );
    // Typing after the outage: the replay goes on, segment after segment.
    await tab.page.click("h1");
    await tab.page.keyboard.type("after the outage");
    const after = await segments(during + 1);
    assert.equal(after.replay_type, "session");
    // And the segments the stand-in kept arrived too: none is missing.
    const ids = (await waitForItems<ReplayEvent>(
      "replay_event",
      (r) => r.replay_id === first.replay_id && (r.segment_id ?? 0) <= after.segment_id!,
      after.segment_id! + 1,
    )).map((r) => r.segment_id);
    assert.deepEqual([...new Set(ids)].sort((a, b) => a! - b!), [
      ...Array(after.segment_id! + 1).keys(),
    ]);
  },
});

Deno.test({
  name: "browser: profiling: the page allows the profiler, and the page load sends a profile",
  ...options,
  async fn() {
    const { allOn } = products!;
    const res = await fetch(allOn.url);
    await res.body?.cancel();
    assert.equal(res.headers.get("document-policy"), "js-profiling");

    await using tab = await openTab();
    const token = await openPage(tab, allOn.url);
    const pageload = await waitForPageload(token);
    const traceId = pageload.contexts?.trace?.trace_id;
    type Profile = { transactions: { trace_id: string }[]; profile: { samples: unknown[] } };
    const profile = await waitForItem<Profile>(
      "profile",
      (p) => p.transactions.some((t) => t.trace_id === traceId),
    );
    assert.ok(profile.profile.samples.length > 1, "the profiler took samples");
    assert.deepEqual(await tab.cspViolations(), []);
  },
});

Deno.test({
  name: "browser: logs from client/sentry.ts carry the trace id of their page load",
  ...options,
  async fn() {
    const { allOn } = products!;
    await using tab = await openTab();
    const token = await openPage(tab, allOn.url);
    type Log = { body: string; trace_id: string; attributes: { query?: { value: string } } };
    const logs = await waitForItem<{ items: Log[] }>(
      "log",
      (p) => p.items.some((l) => l.attributes.query?.value.includes(token)),
    );
    const log = logs.items.find((l) => l.attributes.query?.value.includes(token))!;
    assert.equal(log.body, "home page shown");
    const pageload = await waitForPageload(token);
    assert.equal(log.trace_id, pageload.contexts?.trace?.trace_id);
  },
});
