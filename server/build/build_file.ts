/**
 * Reading back what the build wrote (the manifest, the rendered pages), with the one-line
 * reason a newcomer needs when there is no build yet.
 */

/**
 * The text of a file the build writes. A missing file is an error that says to run the build.
 *
 * @example
 * JSON.parse(await readBuildFile(MANIFEST_FILE));
 */
export async function readBuildFile(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw new Error(`${path} is missing: run \`deno task build\` first`);
    }
    throw error;
  }
}
