/**
 * In-process CPU cost of the app's handler per request, monitoring off / default rate / every
 * request traced, with envelopes sent to a fake ingest in its own process. Quieter than wrk on a
 * shared machine: it counts this process's CPU time, not wall time.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env --allow-run tests/bench/cpu_loop.ts \
 *     [N] [off|on|all]
 *
 * With `--v8-flags=--expose-gc` it also reports the live heap after a full collection, to tell
 * what the app holds from what V8 and the allocator keep.
 */
import process from "node:process";
import { createApp } from "../../server/app.ts";
import type { Handler } from "../../server/http/request_context.ts";
import { loadConfig } from "../../server/lifecycle/config.ts";
import { readManifest } from "../../server/build/manifest.ts";
import { readRenderedPages } from "../../server/page/rendered_pages.ts";
import { startMonitoring } from "../../server/monitoring/sentry.ts";
import { indexStaticFiles } from "../../server/http/static_files.ts";
import { createDeliveryQueue } from "../../server/delivery/queue.ts";
import { startScript } from "./processes.ts";

const n = Number(Deno.args[0] ?? 20_000);
const mode = Deno.args[1] ?? "off";
const ingest = await startScript("ingest.ts", ["--allow-net=127.0.0.1"], [], undefined);
try {
  const dsn = `http://public@${new URL(ingest.url).host}/1`;
  const env: Record<string, string> = { HOST: "127.0.0.1", PORT: "0" };
  if (mode !== "off") env.SENTRY_DSN = dsn;
  if (mode === "all") env.SENTRY_TRACES_SAMPLE_RATE = "1";
  const config = loadConfig(env);
  // As boot.ts: the SDK's envelopes go through the delivery queue, on the platform's fetch.
  const delivery = mode === "off" ? undefined : createDeliveryQueue({
    dsns: config.tunnelAllowedDsns,
    maxBytes: config.deliveryQueueBytes,
    maxAgeMs: config.deliveryMaxAgeS * 1000,
  });
  const monitoring = startMonitoring(config, "r1", { delivery });
  const app: Handler = createApp({
    config,
    manifest: await readManifest(),
    pages: await readRenderedPages(),
    staticIndex: await indexStaticFiles("static", { serveSourceMaps: false }),
    release: "r1",
    monitoring,
    logLine: () => {},
  });
  const info = {
    remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
    completed: Promise.resolve(),
  } as unknown as Deno.ServeHandlerInfo;
  const run = async (count: number) => {
    for (let i = 0; i < count; i += 64) {
      await Promise.all(Array.from({ length: 64 }, async () => {
        const res = await app(new Request("http://127.0.0.1:8000/"), info);
        await res.arrayBuffer();
      }));
      // Send what the batch queued, so no envelope is dropped by the transport's full queue.
      await monitoring.flush(10_000);
      await delivery?.flush(10_000);
    }
  };
  await run(2_000);
  const rssBefore = Deno.memoryUsage().rss;
  const before = process.cpuUsage();
  await run(n);
  const used = process.cpuUsage(before);
  const mem = Deno.memoryUsage();
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const live = gc === undefined ? undefined : Deno.memoryUsage();
  const stats = await (await fetch(`${ingest.url}/stats`)).json();
  console.log(JSON.stringify({
    mode,
    n,
    cpuUsPerReq: +((used.user + used.system) / n).toFixed(1),
    envelopes: stats.complete,
    rssMB: +(mem.rss / 1e6).toFixed(1),
    rssGrowthMB: +((mem.rss - rssBefore) / 1e6).toFixed(1),
    heapMB: +(mem.heapUsed / 1e6).toFixed(1),
    ...(live && {
      liveHeapMB: +(live.heapUsed / 1e6).toFixed(1),
      externalMB: +(live.external / 1e6).toFixed(1),
      rssAfterGcMB: +(live.rss / 1e6).toFixed(1),
    }),
  }));
  await delivery?.close();
} finally {
  await ingest.stop();
}
