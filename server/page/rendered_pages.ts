/** Prerendered pages as the build stores them; free of React, so production never loads it. */
import { PAGES_FILE } from "../constants.ts";
import { readBuildFile } from "../build/manifest.ts";
import type { PageHead } from "../define.ts";

/** One page's head, where the browser finds its component (the page module and export name;
 * none for tests' own pages), and the HTML React rendered for it, placed in `<div id="root">`. */
export interface RenderedPage extends PageHead {
  readonly module?: string;
  readonly component?: string;
  readonly appHtml: string;
}

/** Every declared page by exact path, the page for every other path, and the error page. */
export interface RenderedPages {
  readonly pages: ReadonlyMap<string, RenderedPage>;
  /** The pages with a loader, rendered per request instead. */
  readonly live: readonly string[];
  readonly notFound: RenderedPage;
  readonly error: RenderedPage;
}

/** Store the pages in the build, as JSON. */
export async function writeRenderedPages(rendered: RenderedPages, file = PAGES_FILE) {
  const json = JSON.stringify({ ...rendered, pages: [...rendered.pages] });
  await Deno.writeTextFile(file, json + "\n");
}

/** Read the pages the build rendered; throws a one-line reason if the file is not the build's. */
export async function readRenderedPages(file = PAGES_FILE): Promise<RenderedPages> {
  const parsed = JSON.parse(await readBuildFile(file));
  const isPage = (value: unknown): value is RenderedPage =>
    typeof (value as RenderedPage | null)?.title === "string" &&
    typeof (value as RenderedPage).appHtml === "string";
  const entries: unknown = parsed?.pages;
  if (
    !Array.isArray(entries) || !isPage(parsed.notFound) || !isPage(parsed.error) ||
    !parsed.live?.every?.((path: unknown) => typeof path === "string") ||
    !entries.every((e) => Array.isArray(e) && typeof e[0] === "string" && isPage(e[1]))
  ) {
    throw new Error(`${file} is not a page file this build writes: run \`deno task build\``);
  }
  return { ...parsed, pages: new Map(entries as [string, RenderedPage][]) };
}
