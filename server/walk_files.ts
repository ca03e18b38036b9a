/**
 * The one directory walk: the static-file index, the build's input hash and dev mode's cleanup
 * of stale outputs all list files the same way.
 */

/**
 * Every regular file under `root`, as paths relative to it (`build/main-X.js`), depth first.
 * Symbolic links are left out, so nothing listed can point outside `root`. A missing `root`
 * has no files.
 *
 * @example
 * await listFiles("static"); // ["favicon.svg", "build/main-X.js", ...]
 */
export async function listFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const visit = async (prefix: string) => {
    for await (const entry of Deno.readDir(prefix ? `${root}/${prefix}` : root)) {
      const path = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.isDirectory) await visit(path);
      else if (entry.isFile) found.push(path);
    }
  };
  try {
    await visit("");
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return found;
}
