/**
 * Runs a property-based fuzz campaign in chunks of seeded fast-check runs, several chunks at a
 * time (one connection each), with a checkpoint after every chunk. Two modes: `assertCampaign`
 * stops at the first failure and shrinks it; `surveyCampaign` runs every case, groups failures
 * by class and shrinks one example of each.
 *
 * @example
 * const failures = await assertCampaign(arb, runCase, checkpoint, { runs: 2000, workers: 4, seed });
 */
import fc from "fast-check";
import type { Failure } from "./fuzz_verdict.ts";
import { neededParts } from "./request_ablation.ts";
import { type RawRequest, renderRequest } from "./raw_request.ts";

/** How much to run, how wide, and from which seed. */
export interface CampaignOptions {
  readonly runs: number;
  /** Chunks run at the same time. */
  readonly workers: number;
  /** Chunk k runs with seed `seed + k`, so any chunk replays alone with FUZZ_SEED. */
  readonly seed: number;
  /** Runs per chunk; a checkpoint follows each chunk. */
  readonly chunkRuns: number;
  /** Replay one counterexample: fast-check's path within the chunk of `seed`. */
  readonly path?: string;
  /** Wall-clock budget for shrinking one failure (a hang costs a whole case timeout per try). */
  readonly shrinkBudgetMs: number;
}

/** One case: send the request and judge the answer. */
export type RunCase = (request: RawRequest) => Promise<Failure | null>;
/** Between chunks: a problem found (server down, envelopes at the ingest), or null. */
export type Checkpoint = () => Promise<string | null>;

/** A failure class seen in a survey: how often, and its smallest example after shrinking. */
export interface SurveyRow {
  readonly class: string;
  readonly count: number;
  readonly example: string;
  readonly replay: string;
}

/** Run until the first failure (shrunk) or checkpoint problem; returns what failed. */
export async function assertCampaign(
  arb: fc.Arbitrary<RawRequest>,
  runCase: RunCase,
  checkpoint: Checkpoint,
  options: CampaignOptions,
): Promise<string[]> {
  const problems: string[] = [];
  await forEachChunk(options, () => problems.length > 0, async (seed, numRuns) => {
    const shrink = shrinkBudget(options.shrinkBudgetMs);
    const details = await fc.check(
      fc.asyncProperty(arb, async (request) => {
        if (shrink.exhausted()) return true;
        const failure = await runCase(request);
        if (failure === null) return true;
        shrink.start();
        throw new CaseFailed(failure);
      }),
      { seed, numRuns, path: options.path },
    );
    if (details.failed) problems.push(describeCheckFailure(details, seed));
    const problem = await checkpoint();
    if (problem !== null) problems.push(`checkpoint after the chunk of seed ${seed}: ${problem}`);
  });
  return problems;
}

/** Run every case; group failures by class and shrink one example of each class. */
export async function surveyCampaign(
  arb: fc.Arbitrary<RawRequest>,
  runCase: RunCase,
  checkpoint: Checkpoint,
  options: CampaignOptions,
): Promise<{ rows: SurveyRow[]; casesMs: number }> {
  const started = performance.now();
  const seen = new Map<
    string,
    { kind: string; needed: string[]; count: number; seed: number; index: number }
  >();
  const checkpoints = new Map<string, { count: number; seed: number }>();
  await forEachChunk(options, () => false, async (seed, numRuns) => {
    let index = 0;
    await fc.check(
      fc.asyncProperty(arb, async (request) => {
        const at = index++;
        const failure = await runCase(request);
        if (failure === null) return true;
        const { kind } = failure;
        const needed = await neededParts(request, failsAs(runCase, kind));
        const key = classKey(kind, needed);
        const row = seen.get(key);
        if (row) row.count++;
        else seen.set(key, { kind, needed, count: 1, seed, index: at });
        return true;
      }),
      { seed, numRuns },
    );
    // Counts left out, so the same arrivals in other numbers make one row.
    const problem = (await checkpoint())?.replace(/\d+ x /g, "");
    if (problem !== undefined) {
      const row = checkpoints.get(problem);
      if (row) row.count++;
      else checkpoints.set(problem, { count: 1, seed });
    }
  });
  const casesMs = Math.round(performance.now() - started);
  const rows: SurveyRow[] = [];
  for (const [key, { kind, needed, count, seed, index }] of seen) {
    const shrunk = await shrinkClass(arb, runCase, kind, needed, { seed, index }, options);
    rows.push({ class: key, count, ...shrunk });
  }
  for (const [problem, { count, seed }] of checkpoints) {
    rows.push({
      class: `checkpoint: ${problem}`,
      count,
      example: "(between chunks; not tied to one case)",
      replay: `FUZZ_SEED=${seed} FUZZ_RUNS=${options.chunkRuns} FUZZ_WORKERS=1`,
    });
  }
  return { rows: rows.sort((a, b) => b.count - a.count), casesMs };
}

/** A request as it goes on the wire, escaped, with long runs of one character folded. */
export function showRequest(request: RawRequest): string {
  const wire = Array.from(renderRequest(request), (b) => String.fromCharCode(b)).join("");
  const folded = wire.replace(/(.)\1{19,}/gs, (run, c) => `${c}<x${run.length}>`);
  const pieces = new Set(
    request.cuts.map((c) => c % (wire.length + 1)).filter((c) => c > 0 && c < wire.length),
  );
  return `${JSON.stringify(folded)}${pieces.size > 0 ? ` in ${pieces.size + 1} writes` : ""}`;
}

/** A survey row's name: what went wrong and which hostile parts of the request it needs. */
export function classKey(kind: string, needed: readonly string[]): string {
  return `${kind}, needs: ${needed.length > 0 ? needed.join(" + ") : "any one of several parts"}`;
}

function failsAs(runCase: RunCase, kind: string) {
  return async (request: RawRequest) => (await runCase(request))?.kind === kind;
}

// Shrink from the first case of this class, keeping only cases that fail the same way and
// need the same parts (so the example does not drift to another bug on the way down).
async function shrinkClass(
  arb: fc.Arbitrary<RawRequest>,
  runCase: RunCase,
  kind: string,
  needed: readonly string[],
  { seed, index }: { seed: number; index: number },
  options: CampaignOptions,
): Promise<{ example: string; replay: string }> {
  const shrink = shrinkBudget(options.shrinkBudgetMs);
  shrink.start();
  const key = classKey(kind, needed);
  const details = await fc.check(
    fc.asyncProperty(arb, async (request) => {
      if (shrink.exhausted()) return true;
      if ((await runCase(request))?.kind !== kind) return true;
      return classKey(kind, await neededParts(request, failsAs(runCase, kind))) !== key;
    }),
    { seed, path: String(index) },
  );
  if (!details.failed || details.counterexample === null) {
    return { example: "(did not fail again on replay)", replay: `FUZZ_SEED=${seed}` };
  }
  return {
    example: showRequest(details.counterexample[0]),
    replay: `FUZZ_SEED=${seed} FUZZ_PATH=${details.counterexamplePath}`,
  };
}

// Chunks are handed out in order to `workers` loops; `stop` ends the handing out early.
async function forEachChunk(
  options: CampaignOptions,
  stop: () => boolean,
  run: (seed: number, numRuns: number) => Promise<void>,
): Promise<void> {
  const chunks = options.path === undefined ? Math.ceil(options.runs / options.chunkRuns) : 1;
  let next = 0;
  const worker = async () => {
    while (!stop() && next < chunks) {
      const k = next++;
      await run(
        options.seed + k,
        Math.min(options.chunkRuns, options.runs - k * options.chunkRuns),
      );
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.workers, chunks) }, worker));
}

class CaseFailed extends Error {
  constructor(readonly failure: Failure) {
    super(`${failure.class}${failure.detail ? ` [${failure.detail}]` : ""}`);
  }
}

function describeCheckFailure(details: fc.RunDetails<[RawRequest]>, seed: number): string {
  if (details.counterexample === null) {
    return `fast-check failed without a counterexample (seed ${seed})`;
  }
  const error = details.errorInstance;
  const message = error instanceof Error ? error.message : String(error);
  return `${message}\n  request: ${showRequest(details.counterexample[0])}` +
    `\n  after ${details.numShrinks} shrinks; replay: FUZZ_SEED=${seed} FUZZ_PATH=${details.counterexamplePath}`;
}

// Once shrinking starts it gets a bounded time; after that every case passes, which ends the
// shrinking with the smallest failure found so far (never before the first failure).
function shrinkBudget(ms: number) {
  let deadline = Infinity;
  return {
    start: () => {
      if (deadline === Infinity) deadline = Date.now() + ms;
    },
    exhausted: () => Date.now() > deadline,
  };
}
