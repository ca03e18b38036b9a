/**
 * `deno task bench`: load the app, a bare `Deno.serve` baseline and the tunnel's upstream with
 * `wrk` on 127.0.0.1, print one table with the targets, and write it to
 * bench-results/latest.json. About two minutes.
 *
 *   deno task bench                          # 3 rounds of 3 s per case
 *   deno task bench --rounds=1 --duration=2  # a quick look
 *
 * Every server runs as its own process: the app exactly as `deno task start` runs it (with
 * monitoring on, pointed at a light fake ingest), the baseline, and the ingest. With two or more
 * cores, servers are pinned to CPU 1 and wrk to CPU 0 with `taskset`, so the load generator does
 * not take CPU from what it measures. The cases alternate within each round so machine noise
 * hits the app and its baseline alike, and each run also records the CPU time the answering
 * server spent per request, which moves much less with noise than req/s does.
 */
import { readManifest } from "../../server/build/manifest.ts";
import { errorEnvelope, replayEnvelope } from "./envelopes.ts";
import type { IngestStats } from "./ingest.ts";
import {
  choosePinning,
  cpuSeconds,
  currentRss,
  peakRss,
  pinned,
  readProcFile,
  type Server,
  startApp,
  startScript,
} from "./processes.ts";
import {
  atLeast,
  below,
  type CaseSummary,
  formatTable,
  median,
  pairedRatio,
  summarise,
  type TargetResult,
  type WrkRun,
} from "./report.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const OUT_DIR = `${ROOT}bench-results`;
const BODIES = `${OUT_DIR}/bodies`;
const WRK_SCRIPT = `${ROOT}tests/bench/wrk.lua`;
const MiB = 1024 * 1024;
const CONNECTIONS = 64;
// Many large uploads at once: the tunnel streams a few and the rest wait, unread.
const MANY_UPLOADS = 200;
const STARTS = 5;
const MB = 1e6;

/** One load case: what wrk requests, and which server's CPU answers for it. */
interface LoadCase {
  readonly label: string;
  readonly url: string;
  readonly server: Server;
  /** A file to POST; GET without it. */
  readonly body?: string;
  readonly headers?: readonly string[];
  /** wrk connections; CONNECTIONS by default. */
  readonly connections?: number;
}

const options = parseArgs(Deno.args);
await requireWrk();
const pinning = await choosePinning();
await Deno.mkdir(BODIES, { recursive: true });
const servers: Server[] = [];
try {
  await main();
} finally {
  await Promise.all(servers.map((server) => server.stop()));
}

async function main() {
  const benchStarted = performance.now();
  const manifest = await readManifest(`${ROOT}static/build/.manifest.json`);
  const ingest = keep(
    await startScript("ingest.ts", ["--allow-net=127.0.0.1"], [], pinning?.servers),
  );
  const dsn = `http://public@${new URL(ingest.url).host}/1`;
  // Monitoring on, with every other setting at its default (traces sample rate 0.1).
  // No tunnel rate limit: every tunnel case comes from one address (wrk on 127.0.0.1).
  const appEnv = { SENTRY_DSN: dsn, TUNNEL_RATE_LIMIT: "0" };
  const small = errorEnvelope(dsn);
  const smallFile = `${BODIES}/error-envelope.bin`;
  const largeFile = `${BODIES}/replay-envelope.bin`;
  await Deno.writeFile(smallFile, small);
  await Deno.writeFile(largeFile, replayEnvelope(dsn, MiB));
  console.log(`servers on CPU ${pinning?.servers ?? "any"}, wrk on CPU ${pinning?.wrk ?? "any"}`);

  console.log(`start-up to first 200: ${STARTS} starts after one warm-up...`);
  const startups: number[] = [];
  for (let i = 0; i <= STARTS; i++) {
    const app = await startApp(appEnv, pinning?.servers);
    await app.stop();
    if (i > 0) startups.push(app.startMs);
  }

  console.log(`peak RSS of a fresh app under ${CONNECTIONS} concurrent 1 MiB uploads...`);
  const fresh = await startApp(appEnv, pinning?.servers);
  let uploads: WrkRun;
  let uploadRss: number;
  try {
    const load = {
      label: "1 MiB uploads (fresh app)",
      url: new URL("/monitoring", fresh.url).href,
      server: fresh,
      body: largeFile,
    };
    uploads = await runWrk(load, options.duration);
    uploadRss = await peakRss(fresh.pid);
  } finally {
    await fresh.stop();
  }

  const many = await manyUploads(appEnv, largeFile, ingest);

  const app = keep(await startApp(appEnv, pinning?.servers));
  // The page cases get apps of their own, which take only page load like the baselines: their
  // RSS after the run is compared with the identical baseline's under the same load.
  const appPage = keep(await startApp(appEnv, pinning?.servers));
  // The same app with monitoring off, and with every request traced.
  const appOff = keep(await startApp({}, pinning?.servers));
  const appAll = keep(
    await startApp({ ...appEnv, SENTRY_TRACES_SAMPLE_RATE: "1" }, pinning?.servers),
  );
  const pageRes = await fetch(appPage.url);
  const page = await pageRes.text();
  const pageBytes = new TextEncoder().encode(page).byteLength;
  await Deno.writeTextFile(`${BODIES}/page.html`, page);
  // What the identical-response baseline answers: the app's headers, less what Deno sets itself
  // and the request id, which it makes per request as the app does.
  const appHeaders = Object.fromEntries(
    [...pageRes.headers].filter(([name]) =>
      !["date", "content-length", "x-request-id"].includes(name)
    ),
  );
  await Deno.writeTextFile(`${BODIES}/page-headers.json`, JSON.stringify(appHeaders));
  const identical = keep(
    await startScript(
      "baseline.ts",
      ["--allow-net=127.0.0.1", `--allow-read=${BODIES}`],
      [`${BODIES}/page.html`, `${BODIES}/page-headers.json`],
      pinning?.servers,
    ),
  );
  const baseline = keep(
    await startScript(
      "baseline.ts",
      [
        "--allow-net=127.0.0.1",
        `--allow-read=${BODIES}/page.html`,
      ],
      [`${BODIES}/page.html`],
      pinning?.servers,
    ),
  );

  const tunnelUrl = new URL("/monitoring", app.url).href;
  const directUrl = `${ingest.url}/api/1/envelope/`;
  const cases = {
    baseline: { label: "GET / baseline (bare Deno.serve)", url: baseline.url, server: baseline },
    identical: {
      label: "GET / identical-response baseline",
      url: identical.url,
      server: identical,
    },
    pageOff: { label: "GET / app, monitoring off", url: appOff.url, server: appOff },
    page: { label: "GET / app, monitoring on (default rate)", url: appPage.url, server: appPage },
    pageAll: { label: "GET / app, every request traced", url: appAll.url, server: appAll },
    asset: {
      label: "GET hashed asset, app (br)",
      url: new URL(manifest.script, app.url).href,
      server: app,
      headers: ["Accept-Encoding: gzip, deflate, br"],
    },
    tunnel2k: {
      label: `POST /monitoring ${small.byteLength} B`,
      url: tunnelUrl,
      server: app,
      body: smallFile,
    },
    direct2k: {
      label: `POST ingest direct ${small.byteLength} B`,
      url: directUrl,
      server: ingest,
      body: smallFile,
    },
    tunnel1m: { label: "POST /monitoring 1 MiB", url: tunnelUrl, server: app, body: largeFile },
    direct1m: {
      label: "POST ingest direct 1 MiB",
      url: directUrl,
      server: ingest,
      body: largeFile,
    },
  } satisfies Record<string, LoadCase>;
  type CaseName = keyof typeof cases;
  const names = Object.keys(cases) as CaseName[];

  console.log(`page is ${pageBytes} bytes; warming up...`);
  for (const name of names) await runWrk(cases[name], 1);

  const runs = Object.fromEntries(names.map((n) => [n, [] as WrkRun[]])) as Record<
    CaseName,
    WrkRun[]
  >;
  const streamed = { large: 0, largeStreamed: 0 };
  for (let round = 1; round <= options.rounds; round++) {
    console.log(`round ${round} of ${options.rounds}...`);
    for (const name of names) {
      const before = name === "tunnel1m" ? await ingestStats(ingest) : undefined;
      runs[name].push(await runWrk(cases[name], options.duration));
      if (before !== undefined) {
        const after = await ingestStats(ingest);
        streamed.large += after.large - before.large;
        streamed.largeStreamed += after.largeStreamed - before.largeStreamed;
      }
    }
  }
  const wholeRunRss = await peakRss(app.pid);
  // Settled RSS after the run: `app` took the tunnel and asset load, the others page load only.
  const rssAfter = {
    app: await currentRss(app.pid),
    appPage: await currentRss(appPage.pid),
    appOff: await currentRss(appOff.pid),
    appAll: await currentRss(appAll.pid),
    identical: await currentRss(identical.pid),
  };

  const summaries = Object.fromEntries(
    names.map((n) => [n, summarise(cases[n].label, runs[n])]),
  ) as Record<CaseName, CaseSummary>;
  const pageRatio = pairedRatio(runs.page, runs.baseline);
  const offRatio = pairedRatio(runs.pageOff, runs.identical);
  const onRatio = pairedRatio(runs.page, runs.identical);
  const allRatio = pairedRatio(runs.pageAll, runs.pageOff);
  // Every request of pageAll is traced and sends one envelope; pageOff is the same app without.
  const tracedUs = summaries.pageAll.cpuUsPerReq !== null && summaries.pageOff.cpuUsPerReq !== null
    ? summaries.pageAll.cpuUsPerReq - summaries.pageOff.cpuUsPerReq
    : NaN;
  const rssRatio = rssAfter.appPage / rssAfter.identical;
  const tunnelRatio = pairedRatio(runs.tunnel2k, runs.direct2k);
  const largeRatio = pairedRatio(runs.tunnel1m, runs.direct1m);
  const tunnel1m = summaries.tunnel1m;
  const largeOk = tunnel1m.non2xx === 0 && tunnel1m.reqPerSec > 0 &&
    streamed.largeStreamed > 0 && streamed.largeStreamed === streamed.large;
  const startupMs = median(startups);

  const targets: TargetResult[] = [
    atLeast("GET / monitoring off / identical baseline req/s", offRatio, 0.85),
    atLeast("GET / monitoring on / identical baseline req/s", onRatio, 0.6),
    atLeast("GET / every request traced / monitoring off req/s", allRatio, 0.4),
    below("CPU per traced request, envelope send included (aim)", tracedUs, 100, "µs"),
    below(
      "RSS after GET / load: app (monitoring on) / identical baseline",
      rssRatio,
      1.5001,
      "x",
    ),
    atLeast("POST /monitoring 2 KB tunnel/direct req/s", tunnelRatio, 0.4),
    below(
      `POST /monitoring 2 KB p99 at ${CONNECTIONS} connections`,
      summaries.tunnel2k.p99Ms,
      10,
      "ms",
    ),
    {
      name: "1 MiB envelopes stream through",
      measured: `${streamed.largeStreamed}/${streamed.large} streamed, ${tunnel1m.non2xx} non-2xx`,
      target: "all streamed, 0 non-2xx",
      met: largeOk,
      shortBy: largeOk ? undefined : "see the 1 MiB rows",
    },
    below(`peak RSS, ${CONNECTIONS} concurrent 1 MiB uploads`, uploadRss / MB, 150, "MB"),
    below(`peak RSS, ${MANY_UPLOADS} concurrent 1 MiB uploads`, many.rss / MB, 200, "MB"),
    {
      name: `${MANY_UPLOADS} concurrent 1 MiB uploads all delivered`,
      measured: `${many.delivered} delivered for ${many.run.requests} answered, ` +
        `${many.run.errors.status} non-2xx, ${many.run.errors.timeout} timeouts`,
      target: "all delivered, 0 non-2xx",
      met: many.ok,
      shortBy: many.ok ? undefined : "see the uploads row",
    },
    below(
      "POST /monitoring 2 KB: app CPU per envelope",
      summaries.tunnel2k.cpuUsPerReq ?? NaN,
      120,
      "µs",
    ),
    below("start-up to first 200 (median)", startupMs, 300, "ms"),
  ];
  // What the req/s ratios would be if each server had a core to itself: less noisy, and free
  // of wrk's own ceiling when the other side is fast.
  const cpuRatio = (fast: CaseSummary, slow: CaseSummary) =>
    fast.cpuUsPerReq !== null && slow.cpuUsPerReq !== null
      ? `${(fast.cpuUsPerReq / slow.cpuUsPerReq).toFixed(2)}x by CPU µs/req`
      : "-";
  const extras: [string, string][] = [
    [
      "GET / app/baseline",
      `${pageRatio.toFixed(2)}x req/s, ${cpuRatio(summaries.baseline, summaries.page)}`,
    ],
    [
      "POST 2 KB tunnel/direct",
      `${tunnelRatio.toFixed(2)}x req/s, ${cpuRatio(summaries.direct2k, summaries.tunnel2k)}`,
    ],
    [
      "POST 1 MiB tunnel/direct",
      `${largeRatio.toFixed(2)}x req/s, ${cpuRatio(summaries.direct1m, summaries.tunnel1m)}`,
    ],
    [
      `app peak RSS, fresh, ${CONNECTIONS} x 1 MiB uploads`,
      `${(uploadRss / MB).toFixed(1)} MB (${Math.round(reqPerSecOf(uploads))} req/s)`,
    ],
    [
      `app peak RSS, fresh, ${MANY_UPLOADS} x 1 MiB uploads`,
      `${(many.rss / MB).toFixed(1)} MB (${Math.round(reqPerSecOf(many.run))} req/s, ` +
      `${many.delivered} delivered)`,
    ],
    ["app peak RSS, whole run (all cases)", `${(wholeRunRss / MB).toFixed(1)} MB`],
    [
      "RSS after GET / load: app on / off / traced / identical baseline",
      `${(rssAfter.appPage / MB).toFixed(1)} / ${(rssAfter.appOff / MB).toFixed(1)} / ` +
      `${(rssAfter.appAll / MB).toFixed(1)} / ${(rssAfter.identical / MB).toFixed(1)} MB`,
    ],
    ["RSS after the run: app with tunnel and asset load", `${(rssAfter.app / MB).toFixed(1)} MB`],
    [
      "GET / off, on, traced vs identical baseline",
      `${offRatio.toFixed(2)}x, ${onRatio.toFixed(2)}x, ${
        pairedRatio(runs.pageAll, runs.identical).toFixed(2)
      }x req/s; ${cpuRatio(summaries.identical, summaries.pageOff)} (off)`,
    ],
    [
      "start-up to first 200",
      `median ${startupMs.toFixed(0)} ms; runs ${startups.map((ms) => ms.toFixed(0)).join(", ")}`,
    ],
    ["page size", `${pageBytes} bytes`],
    ["tunnel log lines (uploads wrk cut off as it stopped)", String(app.stderrLines())],
  ];

  const machine = await machineInfo();
  const table = formatTable(Object.values(summaries), extras, targets);
  const took = (performance.now() - benchStarted) / 1000;
  console.log(
    `\n${table}\n\n${machine.cpu}, ${machine.cores} cores, Linux ${machine.kernel}, ` +
      `Deno ${machine.deno}, ${machine.wrk}\n` +
      `${options.rounds} rounds x ${options.duration} s per case, wrk -t1 -c${CONNECTIONS}, ` +
      `servers on CPU ${pinning?.servers ?? "any"}, wrk on CPU ${pinning?.wrk ?? "any"}; ` +
      `took ${took.toFixed(0)} s`,
  );

  const result = {
    date: new Date().toISOString(),
    command: ["deno task bench", ...Deno.args].join(" "),
    machine,
    settings: {
      rounds: options.rounds,
      durationSeconds: options.duration,
      connections: CONNECTIONS,
      wrkThreads: 1,
      pinning: pinning ?? "none",
    },
    cases: summaries,
    ratios: {
      pageVsBaseline: pageRatio,
      offVsIdentical: offRatio,
      onVsIdentical: onRatio,
      tracedVsOff: allRatio,
      tunnelVsDirect2k: tunnelRatio,
      tunnelVsDirect1m: largeRatio,
    },
    peakRssBytes: {
      freshUnder1MiBUploads: uploadRss,
      freshUnderManyUploads: many.rss,
      wholeRun: wholeRunRss,
    },
    manyUploads: { connections: MANY_UPLOADS, delivered: many.delivered, run: many.run },
    rssAfterBytes: rssAfter,
    tracedCpuUs: tracedUs,
    startupMs: { median: startupMs, runs: startups },
    streamed1MiB: streamed,
    pageBytes,
    appStderr: { lines: app.stderrLines(), last: app.lastStderr() },
    targets,
    table,
    raw: runs,
  };
  await Deno.writeTextFile(`${OUT_DIR}/latest.json`, JSON.stringify(result, null, 2) + "\n");
  console.log("written to bench-results/latest.json");
}

/**
 * A fresh app under MANY_UPLOADS concurrent 1 MiB uploads: its peak RSS, and whether every
 * envelope wrk got an answer for reached the ingest (uploads wrk cuts off as it stops may
 * arrive too, so delivered >= answered).
 */
async function manyUploads(env: Record<string, string>, body: string, ingest: Server) {
  console.log(`peak RSS of a fresh app under ${MANY_UPLOADS} concurrent 1 MiB uploads...`);
  const fresh = await startApp(env, pinning?.servers);
  try {
    const before = await ingestStats(ingest);
    const run = await runWrk({
      label: `1 MiB uploads x ${MANY_UPLOADS} (fresh app)`,
      url: new URL("/monitoring", fresh.url).href,
      server: fresh,
      body,
      connections: MANY_UPLOADS,
    }, options.duration);
    const rss = await peakRss(fresh.pid);
    // Let uploads the app was still forwarding when wrk stopped land before counting.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const delivered = (await ingestStats(ingest)).large - before.large;
    const ok = run.errors.status === 0 && run.errors.timeout === 0 && run.requests > 0 &&
      delivered >= run.requests;
    return { run, rss, delivered, ok };
  } finally {
    await fresh.stop();
  }
}

function keep(server: Server): Server {
  servers.push(server);
  return server;
}

/** One wrk run, with the CPU time the answering server used per request. */
async function runWrk(load: LoadCase, seconds: number): Promise<WrkRun> {
  const args = [
    "-t1",
    `-c${load.connections ?? CONNECTIONS}`,
    `-d${seconds}s`,
    "--timeout",
    "10s",
    ...(load.headers ?? []).flatMap((h) => ["-H", h]),
    "-s",
    WRK_SCRIPT,
    load.url,
    ...(load.body === undefined ? [] : ["--", load.body]),
  ];
  const cpuBefore = await cpuSeconds(load.server.pid);
  const { code, stdout, stderr } = await pinned(pinning?.wrk, "wrk", args).output();
  const cpu = await cpuSeconds(load.server.pid) - cpuBefore;
  const text = new TextDecoder().decode(stdout);
  const line = text.split("\n").find((l) => l.startsWith("{"));
  if (code !== 0 || line === undefined) {
    throw new Error(`wrk failed for ${load.label}:\n${text}${new TextDecoder().decode(stderr)}`);
  }
  const run: WrkRun = JSON.parse(line);
  return { ...run, cpu_us_per_req: run.requests > 0 ? cpu * 1e6 / run.requests : undefined };
}

function reqPerSecOf(run: WrkRun): number {
  return run.requests / (run.duration_us / 1e6);
}

async function ingestStats(ingest: Server): Promise<IngestStats> {
  return await (await fetch(`${ingest.url}/stats`)).json();
}

function parseArgs(args: string[]): { rounds: number; duration: number } {
  const value = (name: string, fallback: number) => {
    const arg = args.find((a) => a.startsWith(`--${name}=`));
    const n = arg === undefined ? fallback : Number(arg.slice(name.length + 3));
    if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
    return n;
  };
  return { rounds: value("rounds", 3), duration: value("duration", 3) };
}

async function requireWrk(): Promise<void> {
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    console.error("error: wrk is not installed; on Debian or Ubuntu: apt-get install -y wrk");
    Deno.exit(1);
  }
}

async function machineInfo() {
  const read = (path: string) => readProcFile(path).catch(() => "");
  const wrk = await new Deno.Command("wrk", { args: ["--version"] }).output();
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(await read("/proc/cpuinfo"))?.[1] ?? "unknown CPU",
    cores: navigator.hardwareConcurrency,
    kernel: (await read("/proc/sys/kernel/osrelease")).trim(),
    deno: Deno.version.deno,
    wrk: new TextDecoder().decode(wrk.stdout).split("\n")[0].split(" Copyright")[0].trim(),
  };
}
