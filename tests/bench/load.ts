/**
 * One wrk run against one server, with the CPU time that server spent per request, and what the
 * bench ingest and backend counted. Every case of the benchmark is loaded through {@link runWrk}.
 */
import type { BackendStats } from "./backend.ts";
import type { IngestStats } from "./ingest.ts";
import { cpuSeconds, pinned, type Server } from "./processes.ts";
import type { WrkRun } from "./report.ts";

const WRK_SCRIPT = new URL("./wrk.lua", import.meta.url).pathname;

/** wrk connections per case unless the case says otherwise. */
export const CONNECTIONS = 64;

/** One load case: what wrk requests, and which server's CPU answers for it. */
export interface LoadCase {
  readonly label: string;
  readonly url: string;
  readonly server: Server;
  /** A file to POST; GET without it. */
  readonly body?: string;
  readonly headers?: readonly string[];
  /** wrk connections; CONNECTIONS by default. */
  readonly connections?: number;
}

/** One wrk run (on CPU `cpus` when given), with the CPU time the answering server used per request. */
export async function runWrk(
  load: LoadCase,
  seconds: number,
  cpus: string | undefined,
): Promise<WrkRun> {
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
  const { code, stdout, stderr } = await pinned(cpus, "wrk", args).output();
  const cpu = await cpuSeconds(load.server.pid) - cpuBefore;
  const text = new TextDecoder().decode(stdout);
  const line = text.split("\n").find((l) => l.startsWith("{"));
  if (code !== 0 || line === undefined) {
    throw new Error(`wrk failed for ${load.label}:\n${text}${new TextDecoder().decode(stderr)}`);
  }
  const run: WrkRun = JSON.parse(line);
  return { ...run, cpu_us_per_req: run.requests > 0 ? cpu * 1e6 / run.requests : undefined };
}

/** What the bench ingest (or the loader cases' backend) has received so far. */
export async function ingestStats<T extends IngestStats | BackendStats = IngestStats>(
  ingest: Server,
): Promise<T> {
  return await (await fetch(`${ingest.url}/stats`)).json();
}

/** Exit with a one-line hint when wrk is not installed. */
export async function requireWrk(): Promise<void> {
  try {
    await new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" })
      .output();
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    console.error("error: wrk is not installed; on Debian or Ubuntu: apt-get install -y wrk");
    Deno.exit(1);
  }
}
