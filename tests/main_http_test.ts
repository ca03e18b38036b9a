/**
 * End-to-end over HTTP: the real `main.ts`, started like `deno task start` does, on
 * 127.0.0.1 port 0. Routing and what every response carries: 404, 405 with Allow, /healthz,
 * security headers and CSP nonces, 414 and 431, HEAD, the start-up banner and the request log.
 */
import assert from "node:assert/strict";
import { readManifest } from "../server/build/manifest.ts";
import { escapeHtml } from "../server/http/html.ts";
import { readRenderedPages } from "../server/page/rendered_pages.ts";
import { startServer } from "./support/server.ts";

const manifest = await readManifest();
const server = await startServer();
const url = (path: string) => new URL(path, server.url).href;

// One server for the whole file: starting a process per test would dominate the run time.
Deno.test.afterAll(async () => {
  await server.stop();
});

Deno.test("unknown path: 404 HTML page, the app's not-found page as the build rendered it", async () => {
  const { notFound } = await readRenderedPages();
  const res = await fetch(url("/no/such/page"));
  assert.equal(res.status, 404);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  const html = await res.text();
  assert.match(html, /^<!doctype html>/);
  assert.ok(html.includes(`<title>${escapeHtml(notFound.title)}</title>`), html);
  assert.ok(html.includes(notFound.appHtml), html);
});

Deno.test("wrong method on a known path: 405 with Allow", async () => {
  for (
    const [method, path, allow] of [
      ["POST", "/", "GET, HEAD"],
      ["DELETE", "/healthz", "GET, HEAD"],
      ["GET", "/monitoring", "POST"],
      // The router answers for the tunnel too: the tunnel only ever sees POST.
      ["PUT", "/monitoring", "POST"],
      ["DELETE", "/monitoring", "POST"],
      ["OPTIONS", "/monitoring", "POST"],
      ["PUT", "/robots.txt", "GET, HEAD"],
      ["POST", manifest.script, "GET, HEAD"],
    ]
  ) {
    const res = await fetch(url(path), { method });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.get("allow"), allow);
    await res.body?.cancel();
  }
});

Deno.test("GET /healthz: status and release", async () => {
  const res = await fetch(url("/healthz"));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), { status: "ok", release: manifest.buildId });
});

Deno.test("start-up prints the URL and says monitoring is off", () => {
  assert.match(server.output(), /^Listening on http:\/\/127\.0\.0\.1:\d+\/ /m);
  assert.match(server.output(), /Monitoring is off: set SENTRY_DSN/);
});

Deno.test("security headers on every kind of response", async () => {
  const requests: [string, RequestInit][] = [
    ["/", {}],
    [manifest.script, {}],
    ["/robots.txt", {}],
    ["/healthz", {}],
    ["/nope", {}],
    ["/", { method: "DELETE" }],
    ["/monitoring", { method: "POST", body: "{}\n" }],
  ];
  for (const [path, init] of requests) {
    const res = await fetch(url(path), init);
    await res.body?.cancel();
    const h = res.headers;
    assert.equal(h.get("x-content-type-options"), "nosniff", path);
    assert.equal(h.get("referrer-policy"), "strict-origin-when-cross-origin", path);
    assert.equal(h.get("cross-origin-opener-policy"), "same-origin", path);
    assert.match(h.get("permissions-policy") ?? "", /camera=\(\)/, path);
    assert.equal(h.get("strict-transport-security"), null, "plain HTTP gets no HSTS");
    assert.match(h.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/, path);
  }
});

Deno.test("every HTML response has a CSP; the page's nonce is fresh and on every script", async () => {
  const nonces = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const res = await fetch(url("/"));
    const html = await res.text();
    const csp = res.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce && atob(nonce).length >= 16, "a nonce of 128 bits or more");
    assert.match(csp, /script-src 'nonce-[^']+' 'strict-dynamic'/);
    for (const d of ["object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"]) {
      assert.ok(csp.includes(d), d);
    }
    assert.ok(csp.includes("form-action 'self'") && csp.includes("connect-src 'self'"));
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    assert.ok(scripts.length >= 2);
    for (const tag of [...scripts, ...(html.match(/<link rel="modulepreload"[^>]*>/g) ?? [])]) {
      assert.ok(tag.includes(`nonce="${nonce}"`), tag);
    }
    nonces.add(nonce);
  }
  assert.equal(nonces.size, 20, "no nonce is ever reused");
  // The app's not-found page is the app (same shell, same policy); the small error pages run nothing.
  const notFoundPage = await fetch(url("/nope"));
  await notFoundPage.body?.cancel();
  assert.match(notFoundPage.headers.get("content-security-policy") ?? "", /script-src 'nonce-/);
  const errorPage = await fetch(url("/"), { method: "POST" });
  await errorPage.body?.cancel();
  assert.match(errorPage.headers.get("content-security-policy") ?? "", /default-src 'none'/);
});

Deno.test("oversized URLs and header sets get 414 and 431, never a 500", async () => {
  const long = await fetch(url(`/?q=${"a".repeat(9000)}`));
  assert.equal(long.status, 414);
  await long.body?.cancel();
  const headers = new Headers();
  for (let i = 0; i < 20; i++) headers.set(`x-filler-${i}`, "v".repeat(2000));
  const big = await fetch(url("/"), { headers });
  assert.equal(big.status, 431);
  await big.body?.cancel();
});

Deno.test("HEAD works wherever GET does", async () => {
  for (const path of ["/", "/healthz", "/robots.txt", manifest.script, "/nope"]) {
    const get = await fetch(url(path));
    await get.body?.cancel();
    const head = await fetch(url(path), { method: "HEAD" });
    assert.equal(head.status, get.status, path);
    assert.equal(head.headers.get("content-type"), get.headers.get("content-type"), path);
    assert.equal(await head.text(), "");
  }
});

Deno.test("one JSON log line per request, with the echoed X-Request-Id", async () => {
  const res = await fetch(url("/healthz?token=secret"), { headers: { "x-request-id": "req-42" } });
  await res.body?.cancel();
  assert.equal(res.headers.get("x-request-id"), "req-42");
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 500 && !line; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    line = server.output().split("\n").filter((l) =>
      l.includes('"req-42"')
    ).map((l) => JSON.parse(l))[0];
  }
  assert.ok(line, "the request was logged");
  assert.equal(line.method, "GET");
  assert.equal(line.path, "/healthz", "the query string is not logged");
  assert.equal(line.status, 200);
  assert.equal(typeof line.durationMs, "number");
  assert.equal(typeof line.bytes, "number");
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT/);
});

Deno.test("LOG_FORMAT=text logs plain lines", async () => {
  const own = await startServer({ LOG_FORMAT: "text" });
  try {
    const res = await fetch(new URL("/healthz", own.url), { headers: { "x-request-id": "t-1" } });
    await res.body?.cancel();
    let found = false;
    for (let i = 0; i < 500 && !found; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      found = /^\S+ GET "\/healthz" 200 [\d.]+ms \d+B t-1$/m.test(own.output());
    }
    assert.ok(found, own.output());
  } finally {
    await own.stop();
  }
});

Deno.test("a failing request storm, monitoring off: ten stack traces on stderr, then a count at shutdown", async () => {
  const failing = await startServer({ DEBUG_ERROR_ROUTE: "true" });
  try {
    for (let i = 0; i < 25; i++) {
      const res = await fetch(new URL("/debug/error", failing.url));
      assert.equal(res.status, 500);
      await res.body?.cancel();
    }
  } finally {
    assert.equal((await failing.stop()).code, 0);
  }
  const output = failing.output();
  const inFull = output.match(/request failed: Error: Debug error from GET \/debug\/error/g) ?? [];
  assert.equal(inFull.length, 10, output);
  assert.match(
    output,
    /request failed: 15 more failures not logged in full \(at most 10 per error/,
  );
});
