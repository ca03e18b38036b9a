/**
 * The tunnel inside the app: bugs become a reported 500, refusals are counted in the log (the
 * first with the request's id), and the per-client limit answers 429 over a real socket.
 */
import assert from "node:assert/strict";
import { createApp } from "../server/app.ts";
import { loadConfig } from "../server/lifecycle/config.ts";
import { readManifest } from "../server/build/manifest.ts";
import { readRenderedPages } from "../server/page/rendered_pages.ts";
import type { Monitoring } from "../server/monitoring/monitoring.ts";
import { indexStaticFiles } from "../server/http/static_files.ts";
import { createDeliveryQueue } from "../server/delivery/queue.ts";

const DSN = "http://public@127.0.0.1:9/1";
const encoder = new TextEncoder();
const envelope = () => encoder.encode(`{"dsn":"${DSN}"}\n{"type":"event"}\n{}`);

interface App extends AsyncDisposable {
  readonly url: string;
  readonly lines: string[];
  readonly captured: unknown[];
}

async function startApp(env: Record<string, string>, upstream: typeof fetch): Promise<App> {
  const lines: string[] = [];
  const captured: unknown[] = [];
  const monitoring: Monitoring = {
    instrumentHandler: (handler) => handler,
    captureError: (error) => captured.push(error),
    traceMetaTags: () => "",
    flush: () => Promise.resolve(true),
  };
  const config = loadConfig({ SENTRY_DSN: DSN, ...env });
  const delivery = createDeliveryQueue({
    dsns: config.tunnelAllowedDsns,
    maxBytes: 1024 * 1024,
    maxAgeMs: 60_000,
    fetch: upstream,
    backoffMs: [20, 200],
    log: (line) => lines.push(line),
  });
  const handler = createApp({
    config,
    manifest: await readManifest(),
    pages: await readRenderedPages(),
    staticIndex: await indexStaticFiles("static", { serveSourceMaps: false }),
    release: "test",
    monitoring,
    delivery,
    logLine: (line) => lines.push(line),
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    lines,
    captured,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await delivery.close();
    },
  };
}

const ingestOk: typeof fetch = async (_url, init) => {
  await new Response(init?.body).arrayBuffer();
  return Response.json({ id: "0".repeat(32) });
};

async function post(url: string, headers: HeadersInit = {}) {
  const response = await fetch(`${url}/monitoring`, { method: "POST", body: envelope(), headers });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

Deno.test("an ingest that cannot be reached: the envelope is queued (200), nothing reported as a bug", async () => {
  let tries = 0;
  await using app = await startApp({}, () => (tries++, Promise.reject(new TypeError("refused"))));
  const answer = await post(app.url);
  assert.equal(answer.status, 200);
  assert.equal(answer.text, "{}");
  await eventually(() => tries >= 2, "the queue to try twice");
  assert.deepEqual(app.captured, []);
  assert.ok(app.lines.some((line) => /ingest not answering/.test(line)), app.lines.join("\n"));
});

Deno.test("tunnel refusals go to the request log with the request's id", async () => {
  await using app = await startApp({}, ingestOk);
  const response = await fetch(`${app.url}/monitoring`, {
    method: "POST",
    body: "not an envelope\n",
    headers: { "x-request-id": "req-42" },
  });
  assert.equal(response.status, 400);
  await response.body?.cancel();
  const tunnelLines = app.lines.map((line) => JSON.parse(line)).filter((r) => r.msg === "refused");
  assert.equal(app.lines.length, 1, "counted as a refusal, not logged as answered too");
  assert.equal(tunnelLines[0].client, "127.0.0.1");
  assert.equal(tunnelLines[0].requestId, "req-42");
  assert.equal(tunnelLines[0].status, 400);
  assert.match(tunnelLines[0].reason, /not JSON/);
  assert.match(tunnelLines[0].time, /^\d{4}-\d\d-\d\dT/);
});

Deno.test("TUNNEL_RATE_LIMIT: 429 with Retry-After and X-Sentry-Rate-Limits, nothing forwarded", async () => {
  let forwarded = 0;
  const counting: typeof fetch = (url, init) => {
    forwarded++;
    return ingestOk(url, init);
  };
  await using app = await startApp({ TUNNEL_RATE_LIMIT: "3" }, counting);
  const statuses = [];
  const started = performance.now();
  for (let i = 0; i < 3; i++) statuses.push((await post(app.url)).status);
  assert.deepEqual(statuses, [200, 200, 200]);
  const limited = await post(app.url);
  const elapsedMs = performance.now() - started;
  assert.equal(limited.status, 429);
  // 3 a minute: the next one in 20 s, less what the bucket refilled while the four were sent
  // (20 exactly unless they took a second or more, as on a busy machine).
  const retryAfter = Number(limited.headers.get("retry-after"));
  assert.ok(retryAfter <= 20 && retryAfter >= Math.ceil(20 - elapsedMs / 1000), `${retryAfter}`);
  assert.equal(limited.headers.get("x-sentry-rate-limits"), `${retryAfter}::organization`);
  assert.match(limited.text, /too many envelopes/);
  await eventually(() => forwarded === 3, "3 envelopes forwarded");
  // Other pages are not limited.
  const home = await fetch(`${app.url}/healthz`);
  assert.equal(home.status, 200);
  await home.body?.cancel();
});

Deno.test("TUNNEL_RATE_LIMIT behind a trusted proxy: a client cannot write itself a new address", async () => {
  await using app = await startApp({ TUNNEL_RATE_LIMIT: "3", TRUST_PROXY: "true" }, ingestOk);
  // Each envelope claims a new first address; the proxy's own entry stays the same.
  const statuses = [];
  for (let i = 0; i < 4; i++) {
    const xff = `198.51.100.${i}, 203.0.113.7`;
    statuses.push((await post(app.url, { "x-forwarded-for": xff })).status);
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  // Another address behind the same proxy has its own budget.
  assert.equal((await post(app.url, { "x-forwarded-for": "203.0.113.8" })).status, 200);
});

Deno.test("TUNNEL_RATE_LIMIT=0 turns the limit off, and the per-DSN budget with it", async () => {
  const env = { TUNNEL_RATE_LIMIT: "0", TUNNEL_DSN_RATE_LIMIT: "5" };
  await using app = await startApp(env, ingestOk);
  for (let i = 0; i < 700; i++) assert.equal((await post(app.url)).status, 200);
  assert.equal((await postCspReport(app.url)).status, 204);
});

Deno.test("TUNNEL_DSN_RATE_LIMIT: envelopes and CSP reports spend one budget per DSN", async () => {
  let forwarded = 0;
  const counting: typeof fetch = (url, init) => (forwarded++, ingestOk(url, init));
  await using app = await startApp({ TUNNEL_DSN_RATE_LIMIT: "3", TRUST_PROXY: "true" }, counting);
  // Each from its own address: the per-client limit never applies.
  const from = (i: number) => ({ "x-forwarded-for": `198.51.100.${i}` });
  assert.equal((await postCspReport(app.url, from(0))).status, 204);
  assert.equal((await post(app.url, from(1))).status, 200);
  assert.equal((await post(app.url, from(2))).status, 200);
  const report = await postCspReport(app.url, from(3));
  assert.equal(report.status, 429);
  assert.match(report.text, /too many envelopes for this DSN/);
  assert.match(report.headers.get("retry-after")!, /^[1-9]\d*$/);
  assert.equal((await post(app.url, from(4))).status, 429);
  await eventually(() => forwarded === 3, "3 forwarded");
});

async function postCspReport(url: string, headers: Record<string, string> = {}) {
  const report = { "csp-report": { "violated-directive": "img-src", "blocked-uri": "https://x" } };
  const response = await fetch(`${url}/monitoring/csp`, {
    method: "POST",
    body: JSON.stringify(report),
    headers: { ...headers, "content-type": "application/csp-report" },
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

Deno.test("TUNNEL_PATH moves the tunnel: the route, the page's SDK config; the old path is gone", async () => {
  const seen: string[] = [];
  const ingest: typeof fetch = (url, init) => {
    seen.push(String(url));
    return ingestOk(url, init);
  };
  await using app = await startApp({ TUNNEL_PATH: "/t/a8f3" }, ingest);
  const moved = await fetch(`${app.url}/t/a8f3`, { method: "POST", body: envelope() });
  assert.equal(moved.status, 200, await moved.text());
  await eventually(() => seen.length === 1, "the envelope forwarded");
  assert.deepEqual(seen, ["http://127.0.0.1:9/api/1/envelope/"]);
  const old = await post(app.url);
  assert.equal(old.status, 404);
  const page = await (await fetch(`${app.url}/`)).text();
  const config = /<script type="application\/json" id="app-config"[^>]*>(.*?)<\/script>/.exec(page);
  assert.equal(JSON.parse(config![1]).sentry.tunnel, "/t/a8f3");
  assert.equal(seen.length, 1, "nothing else was forwarded");
});

async function eventually(check: () => boolean, what: string) {
  for (let waited = 0; !check(); waited += 10) {
    if (waited > 5_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
