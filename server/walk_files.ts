/** The one directory walk: the static-file index, the build's input hash, dev mode's cleanup. */

/**
 * Every regular file under `root`, as relative paths (`build/main-X.js`), depth first; symbolic
 * links are left out, so nothing listed can point outside `root`. A missing `root` has none.
 */
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
