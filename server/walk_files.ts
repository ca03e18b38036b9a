/** The one directory walk: the static-file index, the build's input hash, dev mode's cleanup. */

/** Regular files under `root` as relative paths; symlinks skipped, so none leads outside `root`. */
export async function listFiles(root: string, prefix = ""): Promise<string[]> {
  const found: string[] = [];
  try {
    for await (const entry of Deno.readDir(`${root}/${prefix}`)) {
      const path = `${prefix}${entry.name}`;
      if (entry.isDirectory) found.push(...await listFiles(root, `${path}/`));
      else if (entry.isFile) found.push(path);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return found;
}
