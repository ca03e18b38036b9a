/**
 * Pages with a loader, over a real socket, with monitoring on a fake ingest: the page shows the
 * request's data (streamed, the data in the document for hydration), a loader may redirect or
 * answer not-found, and a loader that throws shows the app's error page with one event in the
 * request's trace. In-process: the test's loaders are the app's.
 */
import assert from "node:assert/strict";
import * as Sentry from "@sentry/deno";
import type { Event } from "@sentry/core";
import { App } from "../../../client/App.tsx";
import { createApp } from "../../../server/app.ts";
import { readManifest } from "../../../server/build/manifest.ts";
import { FailureLog } from "../../../server/http/failure_log.ts";
import { indexStaticFiles } from "../../../server/http/static_files.ts";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { startMonitoring } from "../../../server/monitoring/sentry.ts";
import { livePages, renderPages } from "../../../server/page/render.ts";
import { type FixtureLoaders, fixtureRoutesWith } from "../../fixtures/routes.tsx";
import { startFakeIngest } from "../../support/fake_ingest.ts";

class LoaderFailed extends Error {}

const loaders: FixtureLoaders = {
  "/data": (req, ctx) => {
    const name = new URL(req.url).searchParams.get("name");
    if (name === "fail") throw new LoaderFailed("the loader failed");
    if (name === "gone") return ctx.notFound();
    if (name === "old") return Response.redirect(new URL("/data?name=new", req.url), 303);
    if (name === "big") return { name, n: 10n };
    return { name: name ?? "", requestId: ctx.requestId, from: ctx.clientAddress };
  },
};

Deno.test({
  name:
    "a page with a loader: request data, redirect, not-found, and the error page with one event in its trace",
  // The SDK's client is process-wide: its flush leaves a timer of its own for the timeout.
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using ingest = startFakeIngest();
    const config = loadConfig({
      SENTRY_DSN: ingest.dsn("key", "9"),
      SENTRY_TRACES_SAMPLE_RATE: "1",
      HOST: "127.0.0.1",
      PORT: "0",
    });
    const monitoring = startMonitoring(config, "r1");
    const bundle = { pages: fixtureRoutesWith(loaders), App };
    const app = createApp({
      config,
      manifest: await readManifest(),
      staticIndex: await indexStaticFiles("static", { serveSourceMaps: false }),
      pages: renderPages(bundle),
      release: "r1",
      monitoring,
      logLine: () => {},
      failureLog: new FailureLog({ write: () => {} }),
      live: livePages(bundle),
    });
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, app);
    const url = (path: string) => `http://127.0.0.1:${server.addr.port}${path}`;
    try {
      const res = await fetch(url("/data?name=%3C%2Fscript%3EAda"));
      assert.equal(res.status, 200);
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      const html = await res.text();
      assert.match(html, /<h1>Data for <!-- -->&lt;\/script&gt;Ada<\/h1>/);
      assert.match(html, /<meta name="description" content="A page with a loader">/);
      const json = /<script type="application\/json" id="page-data" nonce="([^"]+)">(.*?)<\/script>/
        .exec(html);
      assert.ok(json, html);
      const data = JSON.parse(json[2]);
      assert.equal(data.name, "</script>Ada", "the data, safely serialized");
      assert.equal(data.requestId, res.headers.get("x-request-id"));
      assert.equal(data.from, "127.0.0.1");
      assert.ok((res.headers.get("content-security-policy") ?? "").includes(`'nonce-${json[1]}'`));
      assert.match(html, /<meta name="sentry-trace" content="[0-9a-f]{32}-[0-9a-f]{16}-1">/);

      const moved = await fetch(url("/data?name=old"), { redirect: "manual" });
      assert.equal(moved.status, 303);
      assert.equal(moved.headers.get("location"), url("/data?name=new"));
      const gone = await fetch(url("/data?name=gone"));
      assert.equal(gone.status, 404);
      assert.match(await gone.text(), /<h1>Nothing here<\/h1>/);

      const failed = await fetch(url("/data?name=fail"));
      assert.equal(failed.status, 500);
      const page = await failed.text();
      assert.match(page, /<h1>Fixture error page<\/h1>/, "the app's own error page");
      assert.doesNotMatch(page, /the loader failed/);
      const trace = /<meta name="sentry-trace" content="([0-9a-f]{32})-/.exec(page)?.[1];
      assert.ok(trace, "the error page carries the request's trace");

      // Data JSON cannot carry fails before the page is answered: the error page, not a cut 200.
      const big = await fetch(url("/data?name=big"));
      assert.equal(big.status, 500);
      assert.match(await big.text(), /<h1>Fixture error page<\/h1>.*<\/html>/s);

      await server.shutdown();
      assert.equal(await monitoring.flush(5_000), true);
      const items: [string, Event][] = [];
      for (const [, list] of await ingest.envelopes()) {
        for (const [h, p] of list) items.push([String(h.type), p as Event]);
      }
      const events = items.filter(([type]) => type === "event").map(([, e]) => e);
      assert.equal(events.length, 2, "one event for each failure");
      const failedEvent = events.find((e) =>
        e.exception?.values?.at(-1)?.value === "the loader failed"
      );
      assert.equal(failedEvent?.contexts?.trace?.trace_id, trace);
      assert.ok(events.some((e) => /BigInt/.test(e.exception?.values?.at(-1)?.value ?? "")));
      const transaction = items.find(([type, e]) =>
        type === "transaction" && e.contexts?.trace?.trace_id === trace
      )?.[1];
      assert.equal(transaction?.contexts?.trace?.status, "internal_error");
    } finally {
      await server.shutdown().catch(() => {});
      await Sentry.close(1_000);
    }
  },
});
