import assert from "node:assert/strict";
import { rawRequest } from "../../support/raw_http.ts";
import { App } from "../../../client/App.tsx";
import { fixtureApp } from "../../fixtures/app.ts";
import { FixtureHomePage, fixtureRoutes, renders } from "../../fixtures/routes.tsx";
import { definePages } from "../../../server/define.ts";
import { renderPages } from "../../../server/page/render.ts";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { readManifest } from "../../../server/build/manifest.ts";
import {
  FEEDBACK_PERMISSIONS_POLICY,
  SECURITY_HEADERS,
} from "../../../server/http/request_context.ts";

// Every name a plain object inherits, and paths a client can make up.
const PROTOTYPE_NAMES = [...Object.getOwnPropertyNames(Object.prototype), "__proto__", "prototype"];
const JUNK_PATHS = [
  ...PROTOTYPE_NAMES.map((name) => `/${name}`),
  "/about/x",
  "/About",
  "/%61bout",
  "/about%00",
  "//about",
  `/${"x".repeat(4000)}`,
  "/%E2%80%AE",
];

Deno.test("a declared second page renders with 200 in the same shell, with its own title", async () => {
  const { fetch } = await fixtureApp();
  const res = await fetch("/about");
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  const html = await res.text();
  assert.match(html, /<title>About<\/title>/);
  assert.match(
    html,
    /<div id="root"><div class="shell" data-hydrated="false">.*<main class="shell-main"><h1>About this app<\/h1><\/main>/s,
  );
  const home = await (await fetch("/")).text();
  assert.match(home, /<main class="shell-main">/);
  assert.doesNotMatch(home, /About this app/);
});

Deno.test("any other path gets the app's not-found page: 404, same shell, nonce CSP", async () => {
  const { fetch } = await fixtureApp();
  for (const path of ["/nothing-here", "/about/x", "/a/b/c"]) {
    const res = await fetch(path);
    assert.equal(res.status, 404, path);
    const html = await res.text();
    assert.match(html, /<div class="shell" data-hydrated="false">.*<h1>Nothing here<\/h1>/s);
    assert.match(html, /<title>Not found<\/title>/);
    const csp = res.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce && html.includes(`nonce="${nonce}"`), "the page's scripts carry the nonce");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.doesNotMatch(html, /sentry-trace/, "an untraced answer carries no trace");
  }
});

Deno.test("each page is rendered once: requests and junk paths only splice the template", async () => {
  const before = { ...renders };
  const { fetch } = await fixtureApp();
  assert.deepEqual(renders, { about: before.about + 1, notFound: before.notFound + 1 });
  const nonces = new Set<string>();
  for (let i = 0; i < 50; i++) {
    const res = await fetch("/about");
    nonces.add(/nonce="([^"]+)"/.exec(await res.text())?.[1] ?? "");
  }
  for (let i = 0; i < 200; i++) await (await fetch(`/junk-${i}`)).body?.cancel();
  for (const path of JUNK_PATHS) await (await fetch(path)).body?.cancel();
  assert.deepEqual(renders, { about: before.about + 1, notFound: before.notFound + 1 });
  assert.equal(nonces.size, 50, "every request still gets its own nonce");
});

Deno.test("a declared page asked for with a trailing slash: 308 to the path without it", async () => {
  const { fetch, traced } = await fixtureApp();
  for (const method of ["GET", "HEAD"]) {
    const res = await fetch("/about/?tab=2", { method, redirect: "manual" });
    assert.equal(res.status, 308);
    assert.equal(res.headers.get("location"), "/about?tab=2", "the query kept");
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  }
  assert.equal((await fetch("/about/", { method: "POST" })).status, 405);
  assert.equal((await fetch("//", { redirect: "manual" })).status, 404, "/ has no other form");
  assert.deepEqual(traced, []);
});

Deno.test("the 308's Location percent-encodes a query Deno decoded as UTF-8", async () => {
  const { app, errors } = await fixtureApp();
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, app);
  const res = await rawRequest(`http://127.0.0.1:${server.addr.port}/`, {
    method: "GET",
    target: "/about/?q=\u2028\u00e9",
    headers: [["Host", "app.example"]],
  });
  assert.equal(res.status, 308, res.raw);
  assert.equal(res.headers.get("location"), "/about?q=%E2%80%A8%C3%A9");
  assert.deepEqual(errors, []);
});

Deno.test("hostile paths: 404 (or the page), never a 5xx, never traced, never reported", async () => {
  const { fetch, traced, errors } = await fixtureApp();
  for (const path of JUNK_PATHS) {
    for (const method of ["GET", "HEAD", "POST"]) {
      const res = await fetch(path, { method });
      await res.body?.cancel();
      assert.equal(res.status, 404, `${method} ${path}`);
    }
  }
  assert.deepEqual(traced, []);
  assert.deepEqual(errors, []);
});

Deno.test("pages are traced and get the trace tags; HEAD has GET's headers; POST is a 405", async () => {
  const { fetch, traced } = await fixtureApp();
  const get = await fetch("/about");
  assert.match(await get.text(), /<meta name="sentry-trace" content="fixture">/);
  const head = await fetch("/about", { method: "HEAD" });
  assert.equal(head.status, 200);
  // Deno.serve drops a HEAD answer's body itself (tests/main_static_test.ts checks it on the wire).
  await head.body?.cancel();
  assert.equal(head.headers.get("content-length"), get.headers.get("content-length"));
  const post = await fetch("/about", { method: "POST" });
  await post.body?.cancel();
  assert.equal(post.status, 405);
  assert.equal(post.headers.get("allow"), "GET, HEAD");
  assert.deepEqual(traced, ["/about", "/about"]);
});

Deno.test("a page whose path is a server route or under /api/ stops start-up", async () => {
  for (const path of ["/healthz", "/monitoring", "/api/about"]) {
    const routes = definePages({
      pages: [{ path, title: "x", Page: FixtureHomePage }],
      notFound: fixtureRoutes.notFound,
      error: fixtureRoutes.error,
    });
    await assert.rejects(
      () => fixtureApp({ pages: renderPages({ pages: routes, App }) }),
      Error,
      path,
    );
  }
});

Deno.test("Sentry's products: the page's config names those on, and profiling's Document-Policy", async () => {
  const pageConfig = async (res: Response) =>
    JSON.parse(/id="app-config"[^>]*>([^<]*)<\/script>/.exec(await res.text())?.[1] ?? "");
  const dsn = "https://k@o1.ingest.sentry.io/2";
  const off = await fixtureApp({ config: loadConfig({ SENTRY_DSN: dsn }) });
  const plain = await off.fetch("/about");
  assert.equal(plain.headers.get("document-policy"), null);
  assert.deepEqual(Object.keys((await pageConfig(plain)).sentry), [
    "dsn",
    "environment",
    "release",
    "tracesSampleRate",
    "tunnel",
  ]);

  const on = await fixtureApp({
    config: loadConfig({
      SENTRY_DSN: dsn,
      SENTRY_REPLAYS_ON_ERROR_SAMPLE_RATE: "0.5",
      SENTRY_PROFILES_SAMPLE_RATE: "1",
      SENTRY_ENABLE_LOGS: "true",
      SENTRY_FEEDBACK: "true",
    }),
  });
  for (const path of ["/about", "/nothing-here"]) {
    const res = await on.fetch(path);
    assert.equal(res.headers.get("document-policy"), "js-profiling", path);
    const { sentry } = await pageConfig(res);
    assert.equal(sentry.replaysSessionSampleRate, undefined, "0 is left out");
    assert.equal(sentry.replaysOnErrorSampleRate, 0.5);
    assert.equal(sentry.replayWorker, (await readManifest()).replayWorker);
    assert.deepEqual([sentry.profilesSampleRate, sentry.enableLogs, sentry.feedback], [
      1,
      true,
      true,
    ]);
  }
  assert.equal((await on.fetch("/favicon.svg")).headers.get("document-policy"), null, "HTML only");

  // Without a DSN none of it reaches the page.
  const noDsn = await fixtureApp({
    config: loadConfig({ SENTRY_PROFILES_SAMPLE_RATE: "1", SENTRY_FEEDBACK: "true" }),
  });
  const res = await noDsn.fetch("/about");
  assert.equal(res.headers.get("document-policy"), null);
  assert.deepEqual(await pageConfig(res), {});
});

Deno.test("CSP reports go to the app's own path; report-to only over HTTPS; Feedback's Permissions-Policy", async () => {
  const dsn = "https://k@o1.ingest.sentry.io/2";
  const env = { SENTRY_DSN: dsn, TUNNEL_PATH: "/t", TRUST_PROXY: "true" };
  const { fetch } = await fixtureApp({ config: loadConfig(env) });
  const http = await fetch("/about");
  await http.body?.cancel();
  const policy = http.headers.get("content-security-policy") ?? "";
  assert.match(policy, /; report-uri \/t\/csp$/);
  assert.equal(http.headers.get("reporting-endpoints"), null, "Chromium drops http: endpoints");
  assert.equal(http.headers.get("permissions-policy"), SECURITY_HEADERS["permissions-policy"]);
  const https = await fetch("/about", { headers: { "x-forwarded-proto": "https" } });
  await https.body?.cancel();
  assert.match(https.headers.get("content-security-policy") ?? "", /; report-to csp$/);
  assert.equal(https.headers.get("reporting-endpoints"), 'csp="/t/csp"');

  const feedback = await fixtureApp({ config: loadConfig({ ...env, SENTRY_FEEDBACK: "true" }) });
  for (const path of ["/about", "/nothing-here"]) {
    const res = await feedback.fetch(path);
    await res.body?.cancel();
    assert.equal(res.headers.get("permissions-policy"), FEEDBACK_PERMISSIONS_POLICY, path);
    assert.match(FEEDBACK_PERMISSIONS_POLICY, /^camera=\(self\), microphone=\(\)/);
  }
  // Only pages: other answers keep the strict policy.
  const icon = await feedback.fetch("/favicon.svg");
  await icon.body?.cancel();
  assert.equal(icon.headers.get("permissions-policy"), SECURITY_HEADERS["permissions-policy"]);
});
