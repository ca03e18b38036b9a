/** React rendering: pages without a loader once (build or dev start), others per request. */
import { createElement } from "react";
import { renderToReadableStream, renderToString } from "react-dom/server";
import type { App } from "../../client/App.tsx";
import type { ResolvedPage, Routes } from "../../client/page_table.ts";

/** The shell component, from the server's bundle of the pages (constants.ts SERVER_BUNDLE). */
export type Shell = typeof App;
import type { RenderedPage, RenderedPages } from "./rendered_pages.ts";

/** The HTML of each page of `routes` but those with a loader (`live`), which render per request.
 * A page that throws stops it, unless `onFail` (dev mode) takes it and the others render. */
export function renderPages(
  routes: Routes,
  shell: Shell,
  live: ReadonlySet<string> = new Set(),
  onFail?: (path: string, error: unknown) => void,
): RenderedPages {
  const pages = new Map<string, RenderedPage>();
  for (const [path, page] of routes.pages) {
    if (live.has(path)) continue;
    try {
      pages.set(path, renderPage(page, shell));
    } catch (error) {
      if (onFail === undefined) throw error;
      onFail(path, error);
    }
  }
  // The not-found page stands for every other path: if it throws, the server cannot start.
  return {
    pages,
    notFound: renderPage(routes.notFound, shell),
    error: renderPage(routes.error, shell),
  };
}

function renderPage(page: ResolvedPage, shell: Shell): RenderedPage {
  const { title, description, meta } = page;
  return { title, description, meta, appHtml: renderToString(createElement(shell, { page })) };
}

/** One request's render of a page with its loader's data, as a stream of HTML. */
export function renderPageStream(
  shell: Shell,
  page: ResolvedPage,
  data: unknown,
  nonce: string,
): Promise<ReadableStream<Uint8Array>> {
  return renderToReadableStream(createElement(shell, { page, data }), { nonce });
}
