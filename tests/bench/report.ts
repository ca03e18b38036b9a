/**
 * The benchmark's arithmetic, kept pure: aggregate wrk rounds, compute the ratios, judge the
 * targets and lay out the table. `run.ts` and its modules do the processes and the I/O.
 */

/** One wrk run as `wrk.lua` prints it (latencies in microseconds). */
export interface WrkRun {
  readonly requests: number;
  readonly duration_us: number;
  readonly p50_us: number;
  readonly p99_us: number;
  readonly max_us: number;
  readonly errors: Readonly<Record<"connect" | "read" | "write" | "status" | "timeout", number>>;
  /** CPU time the answering server used per request during the run (added by load.ts). */
  readonly cpu_us_per_req?: number;
}

/** One load case over every round: medians of the rounds, errors summed. */
export interface CaseSummary {
  readonly label: string;
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** CPU time of the answering server per request, in microseconds (median of the rounds). */
  readonly cpuUsPerReq: number | null;
  /** Responses with a status >= 400. */
  readonly non2xx: number;
  /** Socket errors and timeouts (wrk's connect/read/write/timeout). */
  readonly socketErrors: number;
  /** Every round's req/s, in order. */
  readonly rounds: readonly number[];
}

/** A target and whether the run met it. */
export interface TargetResult {
  readonly name: string;
  readonly measured: string;
  readonly target: string;
  readonly met: boolean;
  /** For a missed target: how far off, in words. */
  readonly shortBy?: string;
  /** For a missed target: what this run measured that explains it. */
  readonly why?: string;
}

/** Requests per second of one run. */
export function reqPerSec(run: WrkRun): number {
  return run.requests / (run.duration_us / 1e6);
}

/** The median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Summarise one case's rounds. */
export function summarise(label: string, runs: readonly WrkRun[]): CaseSummary {
  const e = (run: WrkRun) =>
    run.errors.connect + run.errors.read + run.errors.write + run.errors.timeout;
  return {
    label,
    reqPerSec: median(runs.map(reqPerSec)),
    p50Ms: median(runs.map((r) => r.p50_us / 1000)),
    p99Ms: median(runs.map((r) => r.p99_us / 1000)),
    cpuUsPerReq: runs.every((r) => r.cpu_us_per_req !== undefined)
      ? median(runs.map((r) => r.cpu_us_per_req!))
      : null,
    non2xx: runs.reduce((n, r) => n + r.errors.status, 0),
    socketErrors: runs.reduce((n, r) => n + e(r), 0),
    rounds: runs.map(reqPerSec),
  };
}

/**
 * The ratio of two cases measured in the same rounds: the median of the per-round ratios, so
 * a noisy round moves both sides together instead of skewing one of them.
 */
export function pairedRatio(a: readonly WrkRun[], b: readonly WrkRun[]): number {
  return median(a.map((run, i) => reqPerSec(run) / reqPerSec(b[i])));
}

/** `value >= min` as a target. */
export function atLeast(name: string, value: number, min: number, unit = "x"): TargetResult {
  const met = value >= min;
  return {
    name,
    measured: `${fixed(value)}${unit}`,
    target: `>= ${fixed(min)}${unit}`,
    met,
    shortBy: met ? undefined : `${fixed(min - value)}${unit} short (${percentOff(value, min)})`,
  };
}

/** `value <= max` as a target; `made` says what max is made of. */
export function atMost(
  name: string,
  value: number,
  max: number,
  unit: string,
  made: string,
): TargetResult {
  const met = value <= max;
  return {
    name,
    measured: `${fixed(value)} ${unit}`,
    target: `<= ${fixed(max)} ${unit} (${made})`,
    met,
    shortBy: met ? undefined : `${fixed(value - max)} ${unit} over (${percentOff(value, max)})`,
  };
}

/** `value < max` as a target. */
export function below(name: string, value: number, max: number, unit: string): TargetResult {
  const met = value < max;
  return {
    name,
    measured: `${fixed(value)} ${unit}`,
    target: `< ${fixed(max)} ${unit}`,
    met,
    shortBy: met ? undefined : `${fixed(value - max)} ${unit} over (${percentOff(value, max)})`,
  };
}

/** The whole report as text: the case table, then the targets. */
export function formatTable(
  cases: readonly CaseSummary[],
  extras: readonly [string, string][],
  targets: readonly TargetResult[],
): string {
  const rows = [
    ["case", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "non-2xx", "sock err"],
    ...cases.map((c) => [
      c.label,
      Math.round(c.reqPerSec).toString(),
      fixed(c.p50Ms),
      fixed(c.p99Ms),
      c.cpuUsPerReq === null ? "-" : Math.round(c.cpuUsPerReq).toString(),
      String(c.non2xx),
      String(c.socketErrors),
    ]),
  ];
  const lines = [...grid(rows), "", ...grid(extras.map(([k, v]) => [k, v]))];
  lines.push(
    "",
    ...grid([
      ["target", "measured", "target", "result"],
      ...targets.map((t) => [
        t.name,
        t.measured,
        t.target,
        t.met ? "met" : `MISSED: ${t.shortBy}`,
      ]),
    ]),
  );
  const explained = targets.filter((t) => !t.met && t.why !== undefined);
  if (explained.length > 0) {
    lines.push("", "why the missed ones are missed, with figures from this run:");
    for (const t of explained) lines.push(`- ${t.name}: ${t.why}`);
  }
  return lines.join("\n");
}

function grid(rows: readonly string[][]): string[] {
  const widths = rows[0].map((_, col) => Math.max(...rows.map((r) => r[col].length)));
  return rows.map((row) =>
    row.map((cell, col) => col === 0 ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))
      .join("  ").trimEnd()
  );
}

function fixed(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
}

function percentOff(value: number, limit: number): string {
  return `${Math.abs(Math.round((value / limit - 1) * 100))}% ${value < limit ? "below" : "above"}`;
}
