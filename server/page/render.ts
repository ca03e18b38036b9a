/**
 * Render every declared page, and the not-found page, with React: once per build in production
 * (`deno task build` stores them, see rendered_pages.ts), at each server start in development.
 */
import { createElement } from "react";
import { renderToString } from "react-dom/server";
import { App } from "../../client/App.tsx";
import type { ResolvedPage, Routes } from "../../client/page_table.ts";
import type { RenderedPage, RenderedPages } from "./rendered_pages.ts";

/**
 * The HTML of each page of `routes`.
 *
 * @example
 * import { routes } from "../../client/routes.tsx";
 * const rendered = renderPages(routes);
 */
export function renderPages(routes: Routes): RenderedPages {
  const pages = new Map<string, RenderedPage>();
  for (const [path, page] of routes.pages) pages.set(path, renderPage(page));
  return { pages, notFound: renderPage(routes.notFound) };
}

/** The HTML of one page (dev mode renders each on its own, so one that throws spares the rest). */
export function renderPage(page: ResolvedPage): RenderedPage {
  return { title: page.title, appHtml: renderToString(createElement(App, { page })) };
}
