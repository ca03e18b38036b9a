/** The build manifest: the hashed files the page loads; written by the build, read at start. */
import { MANIFEST_FILE } from "../constants.ts";

/** What the HTML document needs to reference, as URL paths. */
export interface Manifest {
  /** Short content hash of every output: the default release. */
  readonly buildId: string;
  /** Hash of the build's inputs, so `build --if-needed` can skip an up-to-date build. */
  readonly inputHash: string;
  /** The module script that hydrates the page. */
  readonly script: string;
  /** Chunks the entry imports statically: preloaded so they download in parallel. */
  readonly preload: readonly string[];
  readonly styles: readonly string[];
  /** Session Replay's compression worker, loaded only while replays are on. */
  readonly replayWorker: string;
  /** Each page module's chunk, what only it imports and its styles, by module (client/pages/...). */
  readonly pages: Readonly<Record<string, Pick<Manifest, "script" | "preload" | "styles">>>;
}

/** The text of a file the build writes; a missing one is an error that says to run the build. */
export async function readBuildFile(path: string): Promise<string> {
  try {
    return await Deno.readTextFile(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new Error(`${path} is missing: run \`deno task build\` first`);
  }
}

/** Read the manifest written by the build. */
export async function readManifest(path = MANIFEST_FILE): Promise<Manifest> {
  return JSON.parse(await readBuildFile(path));
}
