/**
 * A standing property-based fuzz campaign over raw sockets: thousands of hostile HTTP/1.1
 * requests (methods, targets, Host, headers, framing, split writes, bodies) against the real
 * server with monitoring on and a fake ingest. Never a 5xx or a hang, a reason with every app
 * 4xx, nothing at the ingest, and GET / still 200 after every chunk and at the end.
 *
 *   FUZZ_SEED=n    replay (the seed of the failing chunk; printed on failure)
 *   FUZZ_PATH=p    replay one counterexample within that seed's chunk
 *   FUZZ_RUNS=n    how many cases (default 2000); FUZZ_WORKERS=n connections at once (default 4)
 *   FUZZ_SURVEY=1  run every case and print a table of distinct failure classes
 */
import assert from "node:assert/strict";
import {
  assertCampaign,
  type CampaignOptions,
  type Checkpoint,
  type RunCase,
  surveyCampaign,
} from "./support/fuzz_campaign.ts";
import { type FuzzTarget, startFuzzTarget } from "./support/fuzz_target.ts";
import { judgeExchange } from "./support/fuzz_verdict.ts";
import { exchangeRaw } from "./support/raw_exchange.ts";
import { rawRequestArbitrary, renderRequest, splitRequest } from "./support/raw_request.ts";

// When a case that got no answer counts as a hang: a give-up point, not a speed the server must
// keep (the slowest honest case is a stalled body's 408 after the 500 ms read timeout), so far
// enough off that a busy machine never reaches it.
const CASE_TIMEOUT_MS = 10_000;

const options: CampaignOptions = {
  runs: envInteger("FUZZ_RUNS", 2_000),
  workers: envInteger("FUZZ_WORKERS", 4),
  seed: envInteger("FUZZ_SEED", Math.floor(Math.random() * 2 ** 31)),
  chunkRuns: 100,
  path: Deno.env.get("FUZZ_PATH") || undefined,
  shrinkBudgetMs: 20_000,
};
const survey = Deno.env.get("FUZZ_SURVEY") === "1";

function caseRunner(target: FuzzTarget): RunCase {
  return async (request) => {
    const pieces = splitRequest(renderRequest(request), request.cuts);
    const outcome = await exchangeRaw(target.port, pieces, CASE_TIMEOUT_MS, {
      headRequest: request.method === "HEAD",
    });
    return judgeExchange(request, outcome, target.staticPaths);
  };
}

// Between chunks: the server still serves its page, and nothing has reached the ingest (an
// envelope the tunnel forwarded or an error event from the server's own SDK).
function checkpointFor(target: FuzzTarget): Checkpoint {
  let reported = 0;
  return async () => {
    if (!await target.answersHome(CASE_TIMEOUT_MS)) return "GET / did not answer 200";
    const arrivals = await target.ingestArrivals();
    const fresh = arrivals.slice(reported);
    reported = arrivals.length;
    if (fresh.length === 0) return null;
    return `the ingest received ${describeArrivals(fresh)}`;
  };
}

function describeArrivals(arrivals: { source: string; summary: string }[]): string {
  const counts = new Map<string, number>();
  for (const { source, summary } of arrivals) {
    const key = `${source}: ${summary}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort().map(([key, n]) => `${n} x (${key})`).join("; ");
}

if (!survey) {
  Deno.test({
    name: "fuzz: hostile raw requests get no 5xx, no hang, no Sentry envelope; GET / stays 200",
    // The server and ingest are stopped in `finally`; shrinking may leave a socket mid-close.
    sanitizeResources: false,
    async fn() {
      console.log(
        `fuzz: ${options.runs} cases, ${options.workers} at a time, FUZZ_SEED=${options.seed}`,
      );
      await using target = await startFuzzTarget();
      const started = performance.now();
      const problems = await assertCampaign(
        rawRequestArbitrary(target.space),
        caseRunner(target),
        checkpointFor(target),
        options,
      );
      console.log(`fuzz: campaign ran in ${Math.round(performance.now() - started)} ms`);
      assert.ok(await target.answersHome(CASE_TIMEOUT_MS), "GET / answers 200 at the end");
      // SIGTERM flushes the SDK: any event it still held arrives now.
      await target.stop();
      // Only the SDK's client report may arrive: it counts the transactions left unsampled.
      const late = (await target.ingestArrivals()).filter((a) => a.summary !== "client_report")
        .length;
      assert.ok(problems.length === 0, `fuzz found:\n${problems.join("\n")}`);
      assert.equal(late, 0, "the ingest received nothing, even after the SDK flushed");
    },
  });
} else {
  Deno.test({
    name: "fuzz survey: every distinct failure class, with a shrunk example of each",
    sanitizeResources: false,
    async fn() {
      console.log(`fuzz survey: ${options.runs} cases, FUZZ_SEED=${options.seed}`);
      await using target = await startFuzzTarget();
      const { rows, casesMs } = await surveyCampaign(
        rawRequestArbitrary(target.space),
        caseRunner(target),
        checkpointFor(target),
        options,
      );
      await target.stop();
      const arrivals = await target.ingestArrivals();
      const errors = distinctErrorLines(target.server.output());
      const table = rows.map((r) =>
        `- [${r.count}] ${r.class}\n    e.g. ${r.example}\n    replay: ${r.replay}`
      );
      console.log(
        `fuzz survey: cases ran in ${casesMs} ms (failing ones re-sent to find the parts they need)`,
      );
      console.log(`fuzz survey: ${rows.length} failure classes\n${table.join("\n")}`);
      console.log(`ingest, all cases: ${arrivals.length ? describeArrivals(arrivals) : "nothing"}`);
      console.log(`server error lines:\n${errors.map((e) => `  ${e}`).join("\n") || "  none"}`);
      assert.equal(rows.length + arrivals.length, 0, "the survey found failures (see above)");
    },
  });
}

// Each distinct error the server printed, counted: first lines only, quoted values folded.
function distinctErrorLines(output: string): string[] {
  const counts = new Map<string, number>();
  for (const line of output.split("\n")) {
    if (!/^\s*(\w*Error\b|error:|request failed)/.test(line)) continue;
    const key = line.trim().replace(/(Invalid URL: )'.*'/, "$1'...'").slice(0, 200);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([line, n]) => `[${n}] ${line}`);
}

function envInteger(name: string, fallback: number): number {
  const raw = Deno.env.get(name);
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name}: expected an integer`);
  return value;
}
