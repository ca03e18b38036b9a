/**
 * Where the benchmark's figures go: the machine they were measured on, printed under the
 * table, and bench-results/latest.json with every setting, summary, target and raw run.
 */
import { readProcFile } from "./processes.ts";

/** The CPU, core count, kernel, Deno and wrk versions, for the report. */
export async function machineInfo() {
  const read = (path: string) => readProcFile(path).catch(() => "");
  const wrk = await new Deno.Command("wrk", { args: ["--version"] }).output();
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(await read("/proc/cpuinfo"))?.[1] ?? "unknown CPU",
    cores: navigator.hardwareConcurrency,
    kernel: (await read("/proc/sys/kernel/osrelease")).trim(),
    deno: Deno.version.deno,
    wrk: new TextDecoder().decode(wrk.stdout).split("\n")[0].split(" Copyright")[0].trim(),
  };
}

/** Write `result` as pretty JSON to `dir`/latest.json. */
export async function writeResult(dir: string, result: unknown): Promise<void> {
  await Deno.writeTextFile(`${dir}/latest.json`, JSON.stringify(result, null, 2) + "\n");
  console.log("written to bench-results/latest.json");
}
