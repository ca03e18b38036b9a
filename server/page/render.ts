/** React rendering: pages without a loader once (build or dev start), others per request. */
import { createElement } from "react";
import { renderToReadableStream, renderToString } from "react-dom/server";
import type { App } from "../../client/App.tsx";
import type { ResolvedPage, Routes } from "../../client/page_table.ts";

/** The shell component, from the server's bundle of the pages (constants.ts SERVER_BUNDLE). */
export type Shell = typeof App;
import type { RenderedPage, RenderedPages } from "./rendered_pages.ts";

/** The HTML of each page of `routes` but those with a loader (`live`), which render per request. */
export function renderPages(
  routes: Routes,
  shell: Shell,
  live: ReadonlySet<string> = new Set(),
): RenderedPages {
  const pages = new Map<string, RenderedPage>();
  for (const [path, page] of routes.pages) {
    if (!live.has(path)) pages.set(path, renderPage(page, shell));
  }
  return {
    pages,
    notFound: renderPage(routes.notFound, shell),
    error: renderPage(routes.error, shell),
  };
}

/** The HTML of one page (dev mode renders each on its own, so one that throws spares the rest). */
export function renderPage(page: ResolvedPage, shell: Shell): RenderedPage {
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
