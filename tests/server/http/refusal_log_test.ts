/**
 * Refusals counted per client, status and reason per interval: pure with a fake clock, then
 * 20,000 refused envelopes over real sockets through the app.
 */
import assert from "node:assert/strict";
import { createRefusalLog } from "../../../server/http/refusal_log.ts";
import { createApp } from "../../../server/app.ts";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { readManifest } from "../../../server/build/manifest.ts";
import { readRenderedPages } from "../../../server/page/rendered_pages.ts";
import { indexStaticFiles } from "../../../server/http/static_files.ts";
import { MONITORING_OFF } from "../../../server/monitoring/monitoring.ts";

type Line = { msg: string; count: number; status: number; reason: string; client: string };

function clocked() {
  const lines: Line[] = [];
  let nowMs = 0;
  const log = createRefusalLog((line) => lines.push(JSON.parse(line)), "json", {
    intervalMs: 10_000,
    now: () => nowMs,
  });
  return { lines, log, advance: (ms: number) => (nowMs += ms) };
}

const total = (lines: Line[]) => lines.reduce((sum, line) => sum + line.count, 0);

Deno.test("refusal log: the first of each kind at once, the rest one count per interval", () => {
  const { lines, log, advance } = clocked();
  const tooMany = { reason: "too many envelopes", bytes: 10 };
  log.refused("1.2.3.4", 429, tooMany, "r-1");
  assert.deepEqual(lines.map((l) => [l.count, l.status, l.reason, l.client]), [
    [1, 429, "too many envelopes", "1.2.3.4"],
  ]);
  // 20,000 more over 100 s: a line per interval, not per request.
  for (let i = 0; i < 20_000; i++) {
    log.refused("1.2.3.4", 429, tooMany, `r-${i}`);
    advance(5);
  }
  log.refused("5.6.7.8", 400, { reason: "not JSON" }, "r-x");
  advance(10_000);
  log.flushDue();
  assert.ok(lines.length <= 22, `${lines.length} lines`);
  assert.equal(total(lines), 20_002);
  assert.ok(lines.some((l) => l.client === "5.6.7.8" && l.count === 1));
  // Nothing due: nothing more written.
  log.flushDue();
  assert.equal(total(lines), 20_002);
});

Deno.test("refusal log: a flood from many addresses is summed as others past 50 kinds", () => {
  const { lines, log, advance } = clocked();
  for (let i = 0; i < 10_000; i++) {
    log.refused(`10.0.${i >> 8}.${i & 255}`, 429, { reason: "x" }, "r");
  }
  advance(10_000);
  log.flushDue();
  // 50 clients' first lines, then the others' first line and their count.
  assert.equal(lines.length, 52);
  assert.equal(total(lines), 10_000);
  assert.equal(lines.at(-1)?.client, "others");
});

Deno.test({
  name: "over sockets: 20,000 refused envelopes from one client make fewer than 100 log lines",
  sanitizeResources: true,
}, async () => {
  const lines: string[] = [];
  let nowMs = 0;
  const handler = createApp({
    config: loadConfig({ SENTRY_DSN: "http://public@127.0.0.1:9/1", TUNNEL_RATE_LIMIT: "1" }),
    manifest: await readManifest(),
    pages: await readRenderedPages(),
    staticIndex: await indexStaticFiles("static", { serveSourceMaps: false }),
    release: "test",
    monitoring: MONITORING_OFF,
    delivery: { enqueue: () => ({ status: 200 }) },
    logLine: (line) => lines.push(line),
    refusals: createRefusalLog((line) => lines.push(line), "json", { now: () => nowMs }),
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const url = `http://127.0.0.1:${server.addr.port}`;
  const body = `{"dsn":"http://public@127.0.0.1:9/1"}\n{"type":"event"}\n{}`;
  const statuses = new Map<number, number>();
  try {
    let sent = 0;
    // 16 connections at a time, each request after the last on its connection.
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (sent++ < 20_001) {
        const res = await fetch(`${url}/monitoring`, { method: "POST", body });
        await res.body?.cancel();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (sent % 1000 === 0) nowMs += 1000; // 20 s of refusals in all
      }
    }));
    nowMs += 10_000;
    const health = await fetch(`${url}/healthz`); // an answered request: its own line
    await health.body?.cancel();
  } finally {
    await server.shutdown();
  }
  assert.deepEqual([...statuses], [[200, 1], [429, 20_000]]);
  const records = lines.map((line) => JSON.parse(line));
  const refused = records.filter((r) => r.msg === "refused" || r.status === 429);
  assert.ok(refused.length < 100, `${refused.length} lines about refusals`);
  assert.equal(refused.reduce((sum, r) => sum + r.count, 0), 20_000);
  for (const r of refused) {
    assert.deepEqual([r.status, r.client], [429, "127.0.0.1"]);
    assert.match(r.reason, /too many envelopes/);
  }
  // The answered requests keep their line each.
  assert.deepEqual(records.filter((r) => r.path).map((r) => [r.path, r.status]), [
    ["/monitoring", 200],
    ["/healthz", 200],
  ]);
});
