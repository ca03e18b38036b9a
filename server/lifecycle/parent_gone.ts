/**
 * Noticing that whatever started this process has gone, so the server shuts down gracefully
 * instead of running on as an orphan. `npx deno task start` is a chain: npm exec, `sh -c`,
 * `deno task`, the launcher (start.ts), the server. A SIGTERM to npx (what `docker stop` sends
 * to the container's first process) kills npx and its `sh`, and `deno task` is left behind
 * without being told; a SIGKILL anywhere in the chain tells nobody.
 *
 * - The server watches the launcher through its stdin: the launcher holds the other end of a
 *   pipe and never writes; the kernel closes it however the launcher ends.
 * - The launcher watches its parent and the task wrappers above it (see {@link taskAncestors}).
 */

/** Call `onClosed` once stdin reaches its end (or fails). */
export function onStdinClosed(onClosed: () => void): void {
  (async () => {
    try {
      // Nothing is ever written; this only waits for the end.
      for await (const _ of Deno.stdin.readable);
    } catch {
      // A broken pipe ends it as well.
    }
    onClosed();
  })();
}

/** One row of `ps`. */
export interface ProcessRow {
  readonly pid: number;
  readonly ppid: number;
  readonly args: string;
}

// The wrappers between a person (or init) and the launcher: `deno task`, deno task's own
// `sh -c` under npx, and npx itself (`npm exec`, or node running npx-cli).
const TASK_WRAPPER = [
  /(^|\/)deno(\.exe)? task\b/,
  /^(\S*\/)?(ba|da)?sh -c\b.*\bdeno\b.*\btask\b/,
  /^npm exec\b/,
  /(^|\/)npx(\.cmd)?(\s|$)/,
  /\bnpx-cli\.js\b/,
];

/**
 * The processes whose end should stop the launcher: its parent, then each ancestor above it
 * while that is still part of the task command (so `nohup deno task start &` outlives the
 * shell it was typed in, while `npx deno task start` ends with npx). Never pid 1.
 *
 * @example
 * taskAncestors(parseProcessTable(psOutput), Deno.ppid); // [deno task, sh -c, npm exec]
 */
export function taskAncestors(rows: readonly ProcessRow[], parent: number): number[] {
  const byPid = new Map(rows.map((row) => [row.pid, row]));
  const chain: number[] = [];
  let current = byPid.get(parent);
  if (parent > 1) chain.push(parent);
  while (current !== undefined && isTaskWrapper(current.args)) {
    const next = byPid.get(current.ppid);
    if (next === undefined || next.pid <= 1 || !isTaskWrapper(next.args)) break;
    chain.push(next.pid);
    current = next;
  }
  return chain;
}

function isTaskWrapper(args: string): boolean {
  return TASK_WRAPPER.some((pattern) => pattern.test(args));
}

/** Parse `ps -eo pid=,ppid=,args=` output. */
export function parseProcessTable(text: string): ProcessRow[] {
  const rows: ProcessRow[] = [];
  for (const line of text.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (match) rows.push({ pid: Number(match[1]), ppid: Number(match[2]), args: match[3] });
  }
  return rows;
}

/** `ps` output for every process, or "" where `ps` is missing (then only the parent is known). */
export async function readProcessTable(): Promise<string> {
  try {
    const { stdout } = await new Deno.Command("ps", {
      args: ["-eo", "pid=,ppid=,args="],
      stdin: "null",
      stderr: "null",
    }).output();
    return new TextDecoder().decode(stdout);
  } catch {
    return "";
  }
}

/**
 * Poll every `intervalMs`; call `onGone` once when the parent changed (this process was
 * re-parented, so its parent exited) or any watched ancestor no longer exists. Returns a
 * function that stops polling.
 */
export function watchAncestors(
  ancestors: readonly number[],
  onGone: () => void,
  intervalMs = 1_000,
): () => void {
  const parent = Deno.ppid;
  const timer = setInterval(() => {
    if (Deno.ppid !== parent || ancestors.some((pid) => !exists(pid))) {
      clearInterval(timer);
      onGone();
    }
  }, intervalMs);
  return () => clearInterval(timer);
}

// Signal 0 checks that a process exists without signalling it (kill(2)); Deno passes it on
// although its type lists only names.
function exists(pid: number): boolean {
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return !(error instanceof Deno.errors.NotFound);
  }
}
