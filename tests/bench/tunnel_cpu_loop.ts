/**
 * In-process CPU cost of the tunnel per 2 KB envelope: N envelopes, 64 at a time, straight
 * through the tunnel's handler (no HTTP server in front) to the benchmark's fake ingest in its
 * own process, with the platform's fetch. Counts this process's CPU time only, so it is steadier than wrk on a shared machine.
 *
 *   deno run --allow-net=127.0.0.1 --allow-read --allow-env --allow-run \
 *     tests/bench/tunnel_cpu_loop.ts [N]
 */
import process from "node:process";
import { parseDsn } from "../../server/dsn.ts";
import { defaultBodies } from "../support/tunnel_upload.ts";
import { createTunnelHandler } from "../../server/tunnel/handler.ts";
import { createDeliveryQueue } from "../../server/delivery/queue.ts";
import { errorEnvelope } from "./envelopes.ts";
import { startScript } from "./processes.ts";

const n = Number(Deno.args[0] ?? 20_000);
const ingest = await startScript("ingest.ts", ["--allow-net=127.0.0.1"], [], undefined);
try {
  const dsn = `http://public@${new URL(ingest.url).host}/1`;
  const envelope = errorEnvelope(dsn);
  const dsns = [parseDsn(dsn)!];
  const delivery = createDeliveryQueue({ dsns, maxBytes: 64 * 1024 * 1024, maxAgeMs: 3_600_000 });
  const tunnel = createTunnelHandler({
    delivery,
    allowedDsns: dsns,
    maxBodyBytes: 1024 * 1024,
    trustProxy: false,
    bodies: defaultBodies(),
  });
  const info = {
    remoteAddr: { transport: "tcp", hostname: "127.0.0.1", port: 1 },
    completed: Promise.resolve(),
  } as unknown as Deno.ServeHandlerInfo;
  const headers = {
    "content-type": "text/plain;charset=UTF-8",
    "content-length": String(envelope.byteLength),
  };
  // 64 clients, each posting its next envelope as soon as the last is answered (as wrk does).
  const run = async (count: number) => {
    let left = count;
    await Promise.all(Array.from({ length: 64 }, async () => {
      while (left-- > 0) {
        const req = new Request("http://127.0.0.1:8000/monitoring", {
          method: "POST",
          headers,
          body: envelope,
        });
        const res = await tunnel(req, info);
        if (res.status !== 200) throw new Error(`tunnel answered ${res.status}`);
        await res.arrayBuffer();
      }
    }));
  };
  await run(2_000);
  await delivery.flush(60_000); // the warm-up delivered
  const before = process.cpuUsage();
  const started = performance.now();
  await run(n);
  // Delivery is part of the cost: the queue sends in the background after each 200.
  await delivery.flush(60_000);
  const used = process.cpuUsage(before);
  const stats = await (await fetch(`${ingest.url}/stats`)).json();
  console.log(JSON.stringify({
    n,
    cpuUsPerEnvelope: +((used.user + used.system) / n).toFixed(1),
    wallUsPerEnvelope: +((performance.now() - started) * 1000 / n).toFixed(1),
    delivered: stats.complete,
    rssMB: +(Deno.memoryUsage().rss / 1e6).toFixed(1),
  }));
  await delivery.close();
} finally {
  await ingest.stop();
}
