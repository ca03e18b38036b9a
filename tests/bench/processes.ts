/**
 * The benchmark's processes: the app exactly as `deno task start` runs it, the benchmark's own
 * server scripts, and what /proc says about them (CPU time, peak memory).
 */
import { loadConfig } from "../../server/lifecycle/config.ts";
import { readAppPermissions, servingArgs } from "../../server/lifecycle/serve_args.ts";
import { inheritedEnv, startTaskEnv } from "../support/server.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** Which CPUs wrk and the servers run on (`taskset -c` lists); undefined means unpinned. */
export interface Pinning {
  readonly wrk: string;
  readonly servers: string;
}

/** A server process the benchmark started. */
export interface Server {
  readonly pid: number;
  readonly url: string;
  readonly exited: Promise<Deno.CommandStatus>;
  /** Lines written to stderr so far (the tunnel logs refused or failed envelopes there). */
  stderrLines(): number;
  /** The last few of them. */
  lastStderr(): string[];
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<void>;
}

/** A command, pinned to `cpus` with taskset when given. */
export function pinned(
  cpus: string | undefined,
  command: string,
  args: string[],
  options: Deno.CommandOptions = {},
): Deno.Command {
  return cpus === undefined
    ? new Deno.Command(command, { args, ...options })
    : new Deno.Command("taskset", { args: ["-c", cpus, command, ...args], ...options });
}

/** wrk on CPU 0 and every server on CPU 1, when there are two CPUs and taskset works. */
export async function choosePinning(): Promise<Pinning | undefined> {
  if (navigator.hardwareConcurrency < 2) return undefined;
  try {
    const { success } = await new Deno.Command("taskset", { args: ["-c", "0", "true"] }).output();
    return success ? { wrk: "0", servers: "1" } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Start the app as the start task does (same flags, deno.json's app permissions,
 * NODE_ENV=production, a clean environment plus `env`) on a free port, in `project` (a project
 * copy) or this checkout, and wait for its first 200 on `GET /`. `startMs` is the time from
 * spawning the process to that answer.
 */
export async function startApp(
  env: Record<string, string>,
  cpus: string | undefined,
  project = ROOT,
): Promise<Server & { startMs: number }> {
  const port = freePort();
  const app = await readAppPermissions(`${project}/deno.json`);
  const started = performance.now();
  const appEnv: Record<string, string> = {
    ...startTaskEnv(),
    HOST: "127.0.0.1",
    PORT: String(port),
    NO_COLOR: "1",
    ...env,
  };
  // The server process itself, with the permissions the start task's launcher would give it,
  // so its RSS and CPU are read without the launcher in between.
  const process = pinned(cpus, Deno.execPath(), servingArgs(loadConfig(appEnv), app), {
    cwd: project,
    clearEnv: true,
    env: { ...inheritedEnv(), ...appEnv },
    // The server's lifeline (parent_gone.ts): held open, never written, until the process ends.
    stdin: "piped",
    // One log line per request: written, as in production, but not kept.
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const server = track(process, `http://127.0.0.1:${port}/`);
  try {
    await waitForOk(server);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { ...server, startMs: performance.now() - started };
}

// Polls rather than waiting for the "Listening" line: the first answered request is what a
// load balancer's health check (and a user) waits for.
async function waitForOk(server: Server): Promise<void> {
  let exited = false;
  server.exited.then(() => exited = true);
  const deadline = performance.now() + 15_000;
  while (performance.now() < deadline && !exited) {
    try {
      const res = await fetch(server.url, { signal: AbortSignal.timeout(2_000) });
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  throw new Error(`the app did not answer 200 at ${server.url}`);
}

/** Start one of the benchmark's own scripts; it prints `{"port":N}` once it listens. */
export async function startScript(
  script: string,
  permissions: string[],
  args: string[],
  cpus: string | undefined,
): Promise<Server> {
  const process = pinned(cpus, Deno.execPath(), [
    "run",
    ...permissions,
    `${ROOT}tests/bench/${script}`,
    ...args,
  ], { stdin: "null", stdout: "piped", stderr: "piped" }).spawn();
  const lines = process.stdout.pipeThrough(new TextDecoderStream()).values();
  const first = await lines.next();
  if (first.done) throw new Error(`${script} exited before listening`);
  const { port } = JSON.parse(first.value);
  // Keep draining so the pipe never fills.
  (async () => {
    for await (const _ of lines) { /* nothing else is printed */ }
  })();
  return track(process, `http://127.0.0.1:${port}`);
}

function track(process: Deno.ChildProcess, url: string): Server {
  let lines = 0;
  let last: string[] = [];
  const draining = (async () => {
    for await (const chunk of process.stderr.pipeThrough(new TextDecoderStream())) {
      const split = chunk.split("\n");
      lines += split.length - 1;
      last = [...last, ...split.filter((l) => l !== "")].slice(-3);
    }
  })();
  return {
    pid: process.pid,
    url,
    exited: process.status,
    stderrLines: () => lines,
    lastStderr: () => last,
    async stop() {
      try {
        process.kill("SIGTERM");
      } catch { /* already gone */ }
      await process.status;
      await draining;
    },
  };
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/** The process's peak resident set size so far, in bytes (VmHWM). */
export async function peakRss(pid: number): Promise<number> {
  const status = await readProcFile(`/proc/${pid}/status`);
  const kb = /^VmHWM:\s+(\d+) kB/m.exec(status);
  if (kb === null) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(kb[1]) * 1024;
}

/** CPU time (user + system, every thread) the process has used so far, in seconds. */
export async function cpuSeconds(pid: number): Promise<number> {
  // Fields 14 and 15 of /proc/PID/stat, counted after the parenthesised command name.
  const stat = await readProcFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

const clockTicks = await (async () => {
  try {
    const { stdout } = await new Deno.Command("getconf", { args: ["CLK_TCK"] }).output();
    return Number(new TextDecoder().decode(stdout).trim()) || 100;
  } catch {
    return 100;
  }
})();

// Deno asks for --allow-all to read /proc directly; `cat` needs only --allow-run.
export async function readProcFile(path: string): Promise<string> {
  const { success, stdout } = await new Deno.Command("cat", { args: [path] }).output();
  if (!success) throw new Error(`cannot read ${path}`);
  return new TextDecoder().decode(stdout);
}

/** The process's resident set size now, in bytes (VmRSS). */
export async function currentRss(pid: number): Promise<number> {
  const status = await readProcFile(`/proc/${pid}/status`);
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (kb === null) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb[1]) * 1024;
}
