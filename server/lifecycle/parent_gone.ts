/**
 * The launcher stops its server once whatever started it has gone, so no orphan lives on: a
 * SIGTERM to npx (what `docker stop` sends) kills npx and its `sh` but leaves `deno task` untold.
 */

// The wrappers between a person (or init) and the launcher: `deno task`, deno task's own
// `sh -c` under npx, and npx itself (`npm exec`, or node running npx-cli).
const TASK_WRAPPER =
  /(^|\/)deno(\.exe)? task\b|^(\S*\/)?(ba|da)?sh -c\b.*\bdeno\b.*\btask\b|^npm exec\b|(^|\/)npx(\.cmd)?(\s|$)|\bnpx-cli\.js\b/;

/**
 * Pids whose end stops the launcher, from `ps -eo pid=,ppid=,args=`: its parent, then ancestors
 * while both are task wrappers (`nohup deno task start &` outlives its shell; npx does not).
 * Never pid 1.
 */
export function taskAncestors(ps: string, parent: number): number[] {
  const rows = new Map<number, { ppid: number; args: string }>();
  for (const [, pid, ppid, args] of ps.matchAll(/^\s*(\d+)\s+(\d+)\s+(.*)$/gm)) {
    rows.set(Number(pid), { ppid: Number(ppid), args });
  }
  const chain = parent > 1 ? [parent] : [];
  for (let pid = parent; TASK_WRAPPER.test(rows.get(pid)?.args ?? "");) {
    pid = rows.get(pid)!.ppid;
    if (pid <= 1 || !TASK_WRAPPER.test(rows.get(pid)?.args ?? "")) break;
    chain.push(pid);
  }
  return chain;
}

/** This process's {@link taskAncestors}; where `ps` is missing (slim images), only the parent. */
export async function readTaskAncestors(): Promise<number[]> {
  const command = new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,args="], stderr: "null" });
  // output() throws at once, not later, where ps is missing or not allowed.
  const ps = await Promise.try(() => command.output())
    .then(({ stdout }) => new TextDecoder().decode(stdout), () => "");
  return taskAncestors(ps, Deno.ppid);
}

/** Every second: call `onGone` once if this process was re-parented or an ancestor has exited. */
export function watchAncestors(ancestors: readonly number[], onGone: () => void): void {
  const parent = Deno.ppid;
  const timer = setInterval(() => {
    if (Deno.ppid !== parent || !ancestors.every(exists)) {
      clearInterval(timer);
      onGone();
    }
  }, 1_000);
}

// Signal 0 checks that a process exists without signalling it (kill(2)); Deno passes it on
// although its type lists only names. EPERM means it exists but is someone else's.
function exists(pid: number): boolean {
  try {
    Deno.kill(pid, 0 as unknown as Deno.Signal);
    return true;
  } catch (error) {
    return !(error instanceof Deno.errors.NotFound);
  }
}
