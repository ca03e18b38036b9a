/**
 * The machine's processes as `ps` lists them, for tests that check a program leaves none of its
 * children behind.
 *
 * @example
 * const left = descendants(await processes(), child.pid);
 * child.kill("SIGTERM");
 * await allExited(left);
 */
import assert from "node:assert/strict";

/** One row of `ps -eo pid=,ppid=,stat=,args=`. */
export interface Proc {
  readonly pid: number;
  readonly ppid: number;
  /** `ps`'s state letters: `Z…` is a zombie, exited but not yet reaped. */
  readonly state: string;
  readonly args: string;
}

/** Every process on the machine. */
export async function processes(): Promise<Proc[]> {
  const { stdout } = await new Deno.Command("ps", { args: ["-eo", "pid=,ppid=,stat=,args="] })
    .output();
  return [...new TextDecoder().decode(stdout).matchAll(/^\s*(\d+)\s+(\d+)\s+(\S+)\s?(.*)$/gm)]
    .map(([, pid, ppid, state, args]) => ({ pid: Number(pid), ppid: Number(ppid), state, args }));
}

/** The live (not zombie) children of `pid` in `all`, their children, and so on. */
export function descendants(all: readonly Proc[], pid: number): Proc[] {
  return all.filter((p) => p.ppid === pid && !p.state.startsWith("Z"))
    .flatMap((p) => [p, ...descendants(all, p.pid)]);
}

/** The one live child of `pid`. */
export async function onlyChild(pid: number): Promise<number> {
  const children = (await processes()).filter((p) => p.ppid === pid && !p.state.startsWith("Z"));
  assert.equal(children.length, 1, JSON.stringify(children));
  return children[0].pid;
}

/** Resolves once `pid` has exited (gone, or a zombie nobody reaped yet); throws after 30 s. */
export async function exited(pid: number): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const found = (await processes()).find((p) => p.pid === pid);
    if (found === undefined || found.state.startsWith("Z")) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`process ${pid} is still running`);
}

/**
 * Resolves once every process in `left` has exited; else throws after 30 s, and kills them first:
 * a failing run must not leave them behind either.
 */
export async function allExited(left: readonly Proc[]): Promise<void> {
  try {
    for (const { pid } of left) await exited(pid);
  } catch (error) {
    for (const { pid } of left) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone, as it should be */ }
    }
    throw error;
  }
}
