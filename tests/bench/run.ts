/**
 * `deno task bench`: load the app, a bare `Deno.serve` baseline and the tunnel's upstream with
 * `wrk` on 127.0.0.1, print one table with the targets, and write it to
 * bench-results/latest.json, then run it again on the same processes for their memory. About
 * six and a half minutes.
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
 *
 * This file is the entry and the order of the run; the cases are in cases.ts, the fresh-app
 * measurements in fresh_app.ts, one wrk run in load.ts, the targets in targets.ts, the table's
 * arithmetic in report.ts, and the machine and the result file in results.ts.
 */
import { readManifest } from "../../server/build/manifest.ts";
import { type CaseName, type Cases, startCases } from "./cases.ts";
import { errorEnvelope, replayEnvelope } from "./envelopes.ts";
import { MANY_UPLOADS, manyUploads, measureStartups, measureUploads } from "./fresh_app.ts";
import { CONNECTIONS, ingestStats, type LoadCase, requireWrk, runWrk } from "./load.ts";
import type { BackendStats } from "./backend.ts";
import { choosePinning, currentRss, peakRss, type Server, startScript } from "./processes.ts";
import { type CaseSummary, formatTable, summarise, type WrkRun } from "./report.ts";
import { machineInfo, writeResult } from "./results.ts";
import { judge, type Reached } from "./targets.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const OUT_DIR = `${ROOT}bench-results`;
const BODIES = `${OUT_DIR}/bodies`;
const MiB = 1024 * 1024;
const CONTINUOUS_SECONDS = 15;
// The cases whose server is an app process (the others are baselines, the forwarder, the ingest).
const APP_CASES: readonly CaseName[] = [
  "pageOff",
  "page",
  "pageAway",
  "pageAll",
  "asset",
  "tunnel2k",
  "tunnel1m",
];

// The cases whose envelopes or fetches are counted: the 1 MiB envelopes must all stream through,
// and the traced cases' transactions sent (the rest dropped by the SDK's send buffer) tell what
// their CPU figure includes.
const COUNTED = ["tunnel1m", "pageAll", "loaderTraced"] as const satisfies CaseName[];
const NOTHING_YET: Reached = { envelopes: 0, large: 0, largeStreamed: 0, fetches: 0, traced: 0 };

const options = parseArgs(Deno.args);
await requireWrk();
const pinning = await choosePinning();
await Deno.mkdir(BODIES, { recursive: true });
const servers: Server[] = [];
const cleanUps: (() => PromiseLike<void>)[] = [];
try {
  await main();
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  for (const cleanUp of cleanUps) await cleanUp();
}

async function main() {
  const benchStarted = performance.now();
  const manifest = await readManifest(`${ROOT}static/build/.manifest.json`);
  const ingest = keep(
    await startScript("ingest.ts", ["--allow-net=127.0.0.1"], [], pinning?.servers),
  );
  const ingestAway = keep(
    await startScript("ingest.ts", ["--allow-net=127.0.0.1"], [], pinning?.wrk),
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

  const fresh = { env: appEnv, pinning, seconds: options.duration };
  const startups = await measureStartups(fresh);
  const { uploads, uploadRss } = await measureUploads(fresh, largeFile);
  const many = await manyUploads(fresh, largeFile, ingest);

  const { cases, pageBytes, app, capped, backend } = await startCases({
    ingest,
    ingestAway,
    appEnv,
    dsn,
    pinning,
    bodiesDir: BODIES,
    assetPath: manifest.script,
    smallFile,
    smallBytes: small.byteLength,
    largeFile,
    keep,
    afterwards: (cleanUp) => cleanUps.push(cleanUp),
  });
  const names = Object.keys(cases) as CaseName[];

  console.log(`page is ${pageBytes} bytes; warming up...`);
  for (const name of names) await runWrk(cases[name], 1, pinning?.wrk);

  const first = await benchPass(cases, capped, ingest, backend);
  const { runs, rightAfter } = first;
  const reachedIn = Object.fromEntries(first.counted) as Record<typeof COUNTED[number], Reached>;
  const wholeRunRss = await peakRss(app.pid);
  // `app` took the tunnel and asset load (the tunnel's last), the others page load only.
  const rssAfter = {
    app: rightAfter.get("tunnel1m")!,
    appPage: rightAfter.get("page")!,
    appOff: rightAfter.get("pageOff")!,
    appAll: rightAfter.get("pageAll")!,
    identical: rightAfter.get("identical")!,
    loaderOff: rightAfter.get("loaderOff")!,
    loaderTraced: rightAfter.get("loaderTraced")!,
    appPageContinuous: first.appPageContinuous,
    identicalCapped: first.identicalCapped,
  };
  // The whole bench again on the same processes: a leak shows as an app holding more after it,
  // each read right after its last load of the pass (idle, V8 gives memory back at its own pace).
  console.log("the same bench again on the same processes, for their RSS...");
  const apps = [...new Set(APP_CASES.map((name) => cases[name].server))];
  const second = await benchPass(cases, capped, ingest, backend);
  const appsAfterFirst = apps.map((app) => first.lastRss.get(app)!);
  const appsAfterSecond = apps.map((app) => second.lastRss.get(app)!);

  const summaries = Object.fromEntries(
    names.map((n) => [n, summarise(cases[n].label, runs[n])]),
  ) as Record<CaseName, CaseSummary>;
  const { targets, extras, tracedUs, startupMs, ratios } = judge({
    runs,
    summaries,
    reached: reachedIn,
    uploads,
    uploadRss,
    many,
    wholeRunRss,
    rssAfter,
    secondBench: { first: appsAfterFirst, second: appsAfterSecond },
    startups,
    pageBytes,
    tunnelLogLines: app.stderrLines(),
  });

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
    ratios,
    peakRssBytes: {
      freshUnder1MiBUploads: uploadRss,
      freshUnderManyUploads: many.rss,
      wholeRun: wholeRunRss,
    },
    manyUploads: { connections: MANY_UPLOADS, delivered: many.delivered, run: many.run },
    rssAfterBytes: rssAfter,
    tracedCpuUs: tracedUs,
    startupMs: { median: startupMs, runs: startups },
    reached: reachedIn,
    pageBytes,
    appStderr: { lines: app.stderrLines(), last: app.lastStderr() },
    targets,
    table,
    raw: runs,
  };
  await writeResult(OUT_DIR, result);
}

/**
 * Every case once per round, then continuous GET / load: the figures, each case's RSS right
 * after its last run, what reached the ingest and the backend during the cases that send there
 * (1 MiB envelopes streamed, transactions, traced fetches), and the continuous-load RSS.
 */
async function benchPass(
  cases: Cases["cases"],
  capped: LoadCase,
  ingest: Server,
  backend: Server,
) {
  const names = Object.keys(cases) as CaseName[];
  const runs = Object.fromEntries(names.map((n) => [n, [] as WrkRun[]])) as Record<
    CaseName,
    WrkRun[]
  >;
  // What reached the ingest and the backend during the runs of the cases that send there.
  const counted = new Map<CaseName, Reached>(COUNTED.map((name) => [name, { ...NOTHING_YET }]));
  // Each server's RSS the moment its last load ends: what it holds under load. Read at one time
  // for all after the rounds, some had idled long enough for V8 to give memory back (a scratch
  // run saw it after 20-30 s) and others not, so the ratio of two followed the case order.
  const rightAfter = new Map<CaseName, number>();
  // Each server's RSS right after the last load it took in this pass.
  const lastRss = new Map<Server, number>();
  const load = async (load: LoadCase, seconds: number) => {
    const run = await runWrk(load, seconds, pinning?.wrk);
    lastRss.set(load.server, await currentRss(load.server.pid));
    return run;
  };
  for (let round = 1; round <= options.rounds; round++) {
    console.log(`round ${round} of ${options.rounds}...`);
    for (const name of names) {
      const counts = counted.get(name);
      const before = counts && await reached(ingest, backend);
      runs[name].push(await load(cases[name], options.duration));
      if (round === options.rounds) rightAfter.set(name, lastRss.get(cases[name].server)!);
      if (counts && before) {
        const after = await reached(ingest, backend);
        for (const key of Object.keys(counts) as (keyof Reached)[]) {
          counts[key] += after[key] - before[key];
        }
      }
    }
  }
  // Not a target: the app (monitoring on) and the identical baseline under the app's V8 flags,
  // each read after continuous load, by when both have held flat (the baseline from its 6th
  // second to its 120th, the app from its 9th, in scratch runs). Between the rounds' cases a
  // server idles, and V8 may give memory back then.
  console.log(`continuous GET / load, ${CONTINUOUS_SECONDS} s each, for a like-for-like RSS...`);
  await load(capped, CONTINUOUS_SECONDS);
  const identicalCapped = lastRss.get(capped.server)!;
  await load(cases.page, CONTINUOUS_SECONDS);
  const appPageContinuous = lastRss.get(cases.page.server)!;
  return { runs, rightAfter, lastRss, counted, identicalCapped, appPageContinuous };
}

// The ingest's and the backend's counts so far.
async function reached(ingest: Server, backend: Server): Promise<Reached> {
  const [sent, fetched] = await Promise.all([
    ingestStats(ingest),
    ingestStats<BackendStats>(backend),
  ]);
  return {
    envelopes: sent.complete,
    large: sent.large,
    largeStreamed: sent.largeStreamed,
    fetches: fetched.requests,
    traced: fetched.traced,
  };
}

function keep(server: Server): Server {
  servers.push(server);
  return server;
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
