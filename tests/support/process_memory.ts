/** A child process's memory, read from /proc (Linux). */

/** The process's resident and peak resident memory, in MiB. */
export async function memory(pid: number): Promise<{ rss: number; peak: number }> {
  // Deno asks for --allow-all to read /proc itself; `cat` needs only --allow-run.
  const { stdout } = await new Deno.Command("cat", { args: [`/proc/${pid}/status`] }).output();
  const status = new TextDecoder().decode(stdout);
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)![1]);
  return { rss: kib("VmRSS") / 1024, peak: kib("VmHWM") / 1024 };
}
