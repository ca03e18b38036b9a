/**
 * The benchmark's targets and the extra rows of its table: the ratios between cases, monitoring's
 * CPU against the SDK reference's, the CPU per traced request, memory and start-up, each judged
 * against the limit this project holds.
 */
import type { CaseName } from "./cases.ts";
import { MANY_UPLOADS, type ManyUploads } from "./fresh_app.ts";
import { CONNECTIONS } from "./load.ts";
import {
  atLeast,
  atMost,
  below,
  type CaseSummary,
  median,
  pairedRatio,
  reqPerSec,
  type TargetResult,
  type WrkRun,
} from "./report.ts";

const MB = 1e6;

/** What reached the ingest and the loader cases' backend during one case's runs. */
export interface Reached {
  /** Envelopes read whole by the ingest... */
  envelopes: number;
  /** ...of them 1 MiB or more, and of those, how many came streamed (chunked). */
  large: number;
  largeStreamed: number;
  /** Requests to the backend, and how many carried `sentry-trace` and `baggage`. */
  fetches: number;
  traced: number;
}

/** Everything the run measured that the targets are judged on. */
export interface Measured {
  readonly runs: Record<CaseName, WrkRun[]>;
  readonly summaries: Record<CaseName, CaseSummary>;
  /** What reached the ingest and the backend during these cases' runs (the first pass). */
  readonly reached: Readonly<Record<"tunnel1m" | "pageAll" | "loaderTraced", Reached>>;
  readonly uploads: WrkRun;
  readonly uploadRss: number;
  readonly many: ManyUploads;
  readonly wholeRunRss: number;
  /**
   * Each server's RSS the moment its last load ended; and, not for a target, the app (monitoring
   * on) and the identical baseline under the app's V8 flags after continuous load.
   */
  readonly rssAfter: Readonly<
    Record<
      | "app"
      | "appPage"
      | "appOff"
      | "appAll"
      | "identical"
      | "loaderOff"
      | "loaderTraced"
      | "appPageContinuous"
      | "identicalCapped",
      number
    >
  >;
  /** Each app process's RSS right after its last load of the bench, and of the same bench again. */
  readonly secondBench: { readonly first: readonly number[]; readonly second: readonly number[] };
  readonly startups: readonly number[];
  readonly pageBytes: number;
  /** Lines the app with the tunnel load wrote to stderr. */
  readonly tunnelLogLines: number;
}

/** The targets met or missed, the table's extra rows, and the ratios they come from. */
export function judge(m: Measured) {
  const { runs, summaries, reached, uploads, uploadRss, many, wholeRunRss, rssAfter } = m;
  const streamed = reached.tunnel1m;
  const { startups, pageBytes, secondBench } = m;
  const afterBench = Math.max(...secondBench.first);
  // The most any app process holds more after the second bench than after the first.
  const grownBy = Math.max(...secondBench.second.map((rss, i) => rss - secondBench.first[i]));
  const pageRatio = pairedRatio(runs.page, runs.baseline);
  const offRatio = pairedRatio(runs.pageOff, runs.floor);
  const referenceRatio = pairedRatio(runs.sdkReference, runs.floor);
  const onAwayRatio = pairedRatio(runs.pageAway, runs.identical);
  const floorRatio = pairedRatio(runs.floor, runs.identical);
  const allRatio = pairedRatio(runs.pageAll, runs.pageOff);
  // Every request of pageAll is traced (its envelope sent, or dropped by the SDK's send buffer);
  // pageOff is the same app without.
  const us = (name: CaseName) => summaries[name].cpuUsPerReq ?? NaN;
  const tracedUs = us("pageAll") - us("pageOff");
  // The app's own shell: what it costs beyond the floor with monitoring off.
  const shellUs = us("pageOff") - us("floor");
  const onBudgetUs = us("sdkReference") + shellUs;
  // A page whose loader fetches once: traced (its span, the fetch's span and trace headers, one
  // transaction) against the same page untraced.
  const loaderTracedUs = us("loaderTraced") - us("loaderOff");
  const sentShare = (name: "pageAll" | "loaderTraced") => {
    const requests = runs[name].reduce((sum, run) => sum + run.requests, 0);
    return `${Math.round(100 * reached[name].envelopes / requests)}%`;
  };
  const rssRatio = rssAfter.appPage / rssAfter.identical;
  const tunnelRatio = pairedRatio(runs.tunnel2k, runs.direct2k);
  const largeRatio = pairedRatio(runs.tunnel1m, runs.direct1m);
  const forwardRatio = pairedRatio(runs.tunnel2k, runs.forward2k);
  const forwardLargeRatio = pairedRatio(runs.tunnel1m, runs.forward1m);
  const aloneRatio = pairedRatio(runs.tunnelAlone2k, runs.forward2k);
  const streamingRatio = pairedRatio(runs.forwardStream1m, runs.forward1m);
  const tunnel1m = summaries.tunnel1m;
  const largeOk = tunnel1m.non2xx === 0 && tunnel1m.reqPerSec > 0 &&
    streamed.largeStreamed > 0 && streamed.largeStreamed === streamed.large;
  const startupMs = median(startups);
  const why = explanations(
    summaries,
    { floorRatio, offRatio, onAwayRatio, aloneRatio, streamingRatio },
    rssAfter,
  );

  const targets: TargetResult[] = [
    { ...atLeast("GET / monitoring off / floor baseline req/s", offRatio, 0.8), why: why.off },
    {
      ...atMost(
        "GET / monitoring on (default rate), CPU: SDK reference + the app's shell",
        us("page"),
        onBudgetUs,
        "µs",
        `reference ${Math.round(us("sdkReference"))} + shell ${Math.round(shellUs)}`,
      ),
      why: why.on,
    },
    atLeast("GET / every request traced / monitoring off req/s", allRatio, 0.1),
    below("CPU per traced request, envelope send included", tracedUs, 300, "µs"),
    {
      ...below(
        "RSS after GET / load: app (monitoring on) / identical baseline",
        rssRatio,
        1.5001,
        "x",
      ),
      why: why.rss,
    },
    {
      ...atLeast("POST /monitoring 2 KB tunnel / fetch forwarder req/s", forwardRatio, 0.8),
      why: why.forward,
    },
    {
      ...atLeast("POST /monitoring 1 MiB tunnel / fetch forwarder req/s", forwardLargeRatio, 0.8),
      why: why.forwardLarge,
    },
    {
      ...below(
        `POST /monitoring 2 KB p99 at ${CONNECTIONS} connections`,
        summaries.tunnel2k.p99Ms,
        P99_LIMIT_MS,
        "ms",
      ),
      why: why.p99,
    },
    {
      name: "1 MiB envelopes stream through",
      measured: `${streamed.largeStreamed}/${streamed.large} streamed, ${tunnel1m.non2xx} non-2xx`,
      target: "all streamed, 0 non-2xx",
      met: largeOk,
      shortBy: largeOk ? undefined : "see the 1 MiB rows",
    },
    below("RSS after the whole bench, largest app process", afterBench / MB, 200.001, "MB"),
    {
      name: "RSS after a second bench in the same processes, growth",
      measured: `${grownBy > 0 ? "+" : ""}${(grownBy / MB).toFixed(1)} MB`,
      target: "no higher",
      met: grownBy <= 0,
      shortBy: grownBy <= 0 ? undefined : `an app holds ${(grownBy / MB).toFixed(1)} MB more`,
    },
    below(`peak RSS, ${CONNECTIONS} concurrent 1 MiB uploads`, uploadRss / MB, 150, "MB"),
    below(`peak RSS, ${MANY_UPLOADS} concurrent 1 MiB uploads`, many.rss / MB, 250, "MB"),
    {
      name: `${MANY_UPLOADS} concurrent 1 MiB uploads all delivered`,
      measured: `${many.delivered} delivered for ${many.run.requests} answered, ` +
        `${many.run.errors.status} non-2xx, ${many.run.errors.timeout} timeouts`,
      target: "all delivered, 0 non-2xx",
      met: many.ok,
      shortBy: many.ok ? undefined : "see the uploads row",
    },
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
      "POST 2 KB tunnel/forwarder, 1 MiB tunnel/forwarder",
      `${forwardRatio.toFixed(2)}x, ${forwardLargeRatio.toFixed(2)}x req/s; ` +
      `${cpuRatio(summaries.forward2k, summaries.tunnel2k)} (2 KB)`,
    ],
    [
      "POST 2 KB tunnel handler alone (bare Deno.serve)/forwarder",
      `${aloneRatio.toFixed(2)}x req/s, ${cpuRatio(summaries.forward2k, summaries.tunnelAlone2k)}`,
    ],
    [
      "POST 1 MiB streaming forwarder/forwarder, tunnel/streaming forwarder",
      `${streamingRatio.toFixed(2)}x, ${
        pairedRatio(runs.tunnel1m, runs.forwardStream1m).toFixed(2)
      }x req/s`,
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
      `${(uploadRss / MB).toFixed(1)} MB (${Math.round(reqPerSec(uploads))} req/s)`,
    ],
    [
      `app peak RSS, fresh, ${MANY_UPLOADS} x 1 MiB uploads`,
      `${(many.rss / MB).toFixed(1)} MB (${Math.round(reqPerSec(many.run))} req/s, ` +
      `${many.delivered} delivered)`,
    ],
    ["app peak RSS, whole run (all cases)", `${(wholeRunRss / MB).toFixed(1)} MB`],
    [
      "RSS after GET / load: app on / off / traced / identical baseline",
      `${(rssAfter.appPage / MB).toFixed(1)} / ${(rssAfter.appOff / MB).toFixed(1)} / ` +
      `${(rssAfter.appAll / MB).toFixed(1)} / ${(rssAfter.identical / MB).toFixed(1)} MB`,
    ],
    [
      "RSS after continuous GET / load: app on / identical baseline, the app's V8 flags",
      `${(rssAfter.appPageContinuous / MB).toFixed(1)} / ` +
      `${(rssAfter.identicalCapped / MB).toFixed(1)} MB ` +
      `(${(rssAfter.appPageContinuous / rssAfter.identicalCapped).toFixed(2)}x, not a target)`,
    ],
    ["RSS after the run: app with tunnel and asset load", `${(rssAfter.app / MB).toFixed(1)} MB`],
    [
      "RSS of each app process after the bench, then after it again",
      secondBench.first.map((rss, i) =>
        `${(rss / MB).toFixed(0)}->${(secondBench.second[i] / MB).toFixed(0)}`
      ).join(", ") + " MB",
    ],
    [
      "GET / off, on, traced vs identical baseline",
      `${pairedRatio(runs.pageOff, runs.identical).toFixed(2)}x, ${
        pairedRatio(runs.page, runs.identical).toFixed(2)
      }x, ${pairedRatio(runs.pageAll, runs.identical).toFixed(2)}x req/s; ${
        cpuRatio(summaries.identical, summaries.pageOff)
      } (off)`,
    ],
    [
      "GET / SDK reference vs floor; CPU added by the SDK, by the app's monitoring",
      `${referenceRatio.toFixed(2)}x req/s; ${delta(us("sdkReference") - us("floor"))}, ` +
      `${delta(us("page") - us("pageOff"))}`,
    ],
    [
      "GET / SDK's own Deno.serve integration vs by hand, CPU (what Sentry.init alone costs)",
      `${Math.round(us("sdkServe"))} vs ${Math.round(us("sdkReference"))} µs`,
    ],
    [
      "GET / loader with one fetch, CPU: traced - off; fetches traced",
      `${delta(loaderTracedUs)} (${Math.round(us("loaderTraced"))} - ` +
      `${Math.round(us("loaderOff"))}); ${reached.loaderTraced.traced}/` +
      `${reached.loaderTraced.fetches}`,
    ],
    [
      "transactions sent (not dropped by the SDK): every request traced, loader",
      `${sentShare("pageAll")}, ${sentShare("loaderTraced")} of requests`,
    ],
    [
      "RSS after loader load: off / traced",
      `${(rssAfter.loaderOff / MB).toFixed(1)} / ${(rssAfter.loaderTraced / MB).toFixed(1)} MB`,
    ],
    [
      "GET / floor (identical + request read) vs identical",
      `${floorRatio.toFixed(2)}x req/s, ${cpuRatio(summaries.identical, summaries.floor)}`,
    ],
    [
      "GET / on vs identical, the ingest on wrk's CPU (not a target)",
      `${onAwayRatio.toFixed(2)}x req/s, ${cpuRatio(summaries.identical, summaries.pageAway)}`,
    ],
    [
      "start-up to first 200",
      `median ${startupMs.toFixed(0)} ms; runs ${startups.map((ms) => ms.toFixed(0)).join(", ")}`,
    ],
    ["page size", `${pageBytes} bytes`],
    ["tunnel log lines (uploads wrk cut off as it stopped)", String(m.tunnelLogLines)],
  ];

  return {
    targets,
    extras,
    tracedUs,
    monitoringCpuUs: { app: us("page"), reference: us("sdkReference"), shell: shellUs },
    loaderCpuUs: { off: us("loaderOff"), traced: us("loaderTraced"), difference: loaderTracedUs },
    startupMs,
    ratios: {
      pageVsBaseline: pageRatio,
      offVsFloor: offRatio,
      referenceVsFloor: referenceRatio,
      onIngestAwayVsIdentical: onAwayRatio,
      floorVsIdentical: floorRatio,
      tracedVsOff: allRatio,
      tunnelVsDirect2k: tunnelRatio,
      tunnelVsDirect1m: largeRatio,
      tunnelVsForwarder2k: forwardRatio,
      tunnelVsForwarder1m: forwardLargeRatio,
      tunnelAloneVsForwarder2k: aloneRatio,
      streamingVsForwarder1m: streamingRatio,
    },
  };
}

const P99_LIMIT_MS = 10;

/**
 * For each target that can be missed on this machine, the figures of the same run that say why:
 * printed under the targets when it is missed.
 */
function explanations(
  s: Record<CaseName, CaseSummary>,
  r: {
    floorRatio: number;
    offRatio: number;
    onAwayRatio: number;
    aloneRatio: number;
    streamingRatio: number;
  },
  rss: Measured["rssAfter"],
) {
  const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  const us = (name: CaseName) => s[name].cpuUsPerReq ?? NaN;
  const identical = us("identical");
  const meanBound = Math.round(CONNECTIONS * 1000 / P99_LIMIT_MS);
  const tunnelRate = s.tunnel2k.reqPerSec;
  return {
    off: `the floor case (the identical response, only the request read on top) is ` +
      `${ratio(r.floorRatio)}; by CPU, reading the request costs ${
        delta(us("floor") - identical)
      } ` +
      `per request and the app's own work (size and Host checks, routing, error handling, ` +
      `context, log line) ${delta(us("pageOff") - us("floor"))} more`,
    on: `by CPU, the SDK as its docs say (isolation scope, span, trace tags, the traced ` +
      `share's transactions) adds ${delta(us("sdkReference") - us("floor"))} to the floor, and ` +
      `the app's monitoring adds ${delta(us("page") - us("pageOff"))} to the app off: what it ` +
      `does beyond the docs (the request's data in the scope, span attributes and status, which ` +
      `the SDK's own Deno.serve integration records too, at ${delta(us("sdkServe"))} a request; ` +
      `the incoming trace's bounds, two send buffers, the fetch tracing integration); a round ` +
      `moves each side by tens of µs; with the ingest on wrk's CPU instead the app is ` +
      `${ratio(r.onAwayRatio)} the identical baseline`,
    forward: `the forwarder reads each body whole, parses its first line and posts it with ` +
      `fetch (${delta(us("forward2k"))} per envelope by CPU); the tunnel's handler alone on a ` +
      `bare Deno.serve adds its checks, cap, deadline and filtered answer ` +
      `(${delta(us("tunnelAlone2k"))}, ${ratio(r.aloneRatio)} of the forwarder), and the app ` +
      `adds what every request pays (Host and size checks, request id, common headers, log ` +
      `line), the SDK's presence and its young-generation cap (${delta(us("tunnel2k"))})`,
    forwardLarge: `the forwarder reads each 1 MiB body whole and posts one buffer; the tunnel ` +
      `streams a large body as it arrives, which the issue asks of it, and the same forwarder ` +
      `streaming instead (first chunk checked, the rest sent as the ingest takes it) is ` +
      `${ratio(r.streamingRatio)} of it`,
    p99: tunnelRate < meanBound
      ? `with ${CONNECTIONS} requests always in flight the mean latency is ${CONNECTIONS} / ` +
        `req/s: under ${P99_LIMIT_MS} ms it needs over ${meanBound} req/s, and the tunnel ` +
        `served ${Math.round(tunnelRate)}`
      : `the tunnel served ${Math.round(tunnelRate)} req/s, enough for a mean latency under ` +
        `${P99_LIMIT_MS} ms at ${CONNECTIONS} connections; its slowest 1% waited longer`,
    rss: `after the same page load the app with monitoring off holds ` +
      `${mb(rss.appOff - rss.identical)} more than the baseline (its own code and the parts of ` +
      `Deno it runs, the static files it keeps, the request log), and on ` +
      `${mb(rss.appPage - rss.appOff)} more again (the SDK's code and client, the connection to ` +
      `the ingest, the traced share's transactions); V8's heap grows in steps with what the ` +
      `scavenges promote, so the same code lands a few MB apart from one run to the next`,
  };
}

// A difference of CPU µs per request for a sentence: noise can make a small one negative.
function delta(us: number): string {
  if (!Number.isFinite(us)) return "n/a";
  return us < 0 ? "none measurable" : `${Math.round(us)} µs`;
}

function ratio(value: number): string {
  return Number.isFinite(value) ? `${value.toFixed(2)}x` : "n/a";
}
