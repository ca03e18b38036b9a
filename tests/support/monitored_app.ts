/**
 * The app in this process with `@sentry/deno` on (startMonitoring), sending to a fake ingest, at
 * trace rate 1 in environment "server-env" unless `env` says otherwise: for tests of monitoring
 * as app code and Sentry users meet it. Each call runs `Sentry.init` anew.
 */
import assert from "node:assert/strict";
import * as Sentry from "@sentry/deno";
import { createApp } from "../../server/app.ts";
import { loadConfig } from "../../server/lifecycle/config.ts";
import { readManifest } from "../../server/build/manifest.ts";
import { readRenderedPages } from "../../server/page/rendered_pages.ts";
import { type MonitoringOptions, startMonitoring } from "../../server/monitoring/sentry.ts";
import { indexStaticFiles } from "../../server/http/static_files.ts";
import { FailureLog } from "../../server/http/failure_log.ts";
import type { ApiRoutes } from "../../server/api/router.ts";
import { livePages, renderPages } from "../../server/page/render.ts";
import { App } from "../../client/App.tsx";
import { type FixtureLoaders, fixtureRoutesWith } from "../fixtures/routes.tsx";
import type { FakeIngest } from "./fake_ingest.ts";
import { createDeliveryQueue } from "../../server/delivery/queue.ts";

const manifest = await readManifest();
const pages = await readRenderedPages();
const staticIndex = await indexStaticFiles("static", { serveSourceMaps: false });

/** The app with monitoring on and `apiRoutes`, listening on 127.0.0.1; stopped on dispose. */
export function startMonitoredApp(
  ingest: FakeIngest,
  apiRoutes: ApiRoutes = {},
  env: Record<string, string> = {},
  options: MonitoringOptions = {},
  loaders?: FixtureLoaders,
) {
  const config = loadConfig({
    SENTRY_DSN: ingest.dsn("key", "7"),
    SENTRY_TRACES_SAMPLE_RATE: "1",
    SENTRY_ENVIRONMENT: "server-env",
    HOST: "127.0.0.1",
    PORT: "0",
    ...env,
  });
  const delivery = createDeliveryQueue({
    dsns: config.tunnelAllowedDsns,
    maxBytes: 64 * 1024 * 1024,
    maxAgeMs: 60_000,
    log: () => {},
  });
  const monitoring = startMonitoring(config, "r1", { delivery, ...options });
  const bundle = loaders && { pages: fixtureRoutesWith(loaders), App };
  const app = createApp({
    config,
    manifest,
    pages: bundle ? renderPages(bundle) : pages,
    staticIndex,
    release: "r1",
    monitoring,
    delivery,
    apiRoutes,
    logLine: () => {},
    failureLog: new FailureLog({ write: () => {} }),
    live: bundle && livePages(bundle),
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: config.port, onListen: () => {} }, app);
  const url = `http://127.0.0.1:${server.addr.port}`;
  return {
    url,
    /** Stop listening and send everything the SDK holds. */
    async stop() {
      await server.shutdown();
      assert.equal(await monitoring.flush(5_000), true, "flushed in time");
      assert.equal(await delivery.flush(5_000), true, "delivered in time");
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown().catch(() => {});
      await delivery.close();
      await Sentry.close(1_000);
    },
  };
}
