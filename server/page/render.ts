/** React rendering: pages without a loader once (build or dev start), others per request. */
import { createElement } from "react";
import { renderToReadableStream, renderToString } from "react-dom/server";
import type { App } from "../../client/App.tsx";
import type { PageHead, Pages } from "../define.ts";
import { SERVER_BUNDLE } from "../constants.ts";
import type { LivePage, LivePages } from "./handler.ts";
import type { RenderedPage, RenderedPages } from "./rendered_pages.ts";

/** The shell component, from the server's bundle of the pages (constants.ts SERVER_BUNDLE). */
export type Shell = typeof App;
type PageModules = readonly (readonly [string, Readonly<Record<string, unknown>>])[];

/** The server's bundle: server/pages.ts's pages, the shell, each page module's exports by path. */
export interface ServerBundle {
  readonly pages: Pages;
  readonly App: Shell;
  readonly pageModules?: PageModules;
}

/** Import the server's bundle of the pages, as the build wrote it. */
export async function importServerBundle(): Promise<ServerBundle> {
  return await import(new URL(`../../${SERVER_BUNDLE}`, import.meta.url).href);
}

/** A page's head and the page module exporting its component; without `modules`, only the head. */
export function pageRef(page: PageHead & { Page: unknown }, label: string, modules?: PageModules) {
  const { title, description, meta } = page;
  const ref: Omit<RenderedPage, "appHtml"> = { title, description, meta };
  for (const [module, exports] of modules ?? []) {
    const component = Object.keys(exports).find((name) => exports[name] === page.Page);
    if (component !== undefined) return { ...ref, module, component };
  }
  if (modules === undefined) return ref;
  throw new Error(`page ${label}: its component is not exported by a module in client/pages/`);
}

/** The HTML of each page without a loader (those with one are `live`). A page that throws stops
 * it, unless `onFail` (dev mode) takes it and the others render. */
export function renderPages(
  { pages, App, pageModules }: ServerBundle,
  onFail?: (path: string, error: unknown) => void,
): RenderedPages {
  const rendered = new Map<string, RenderedPage>();
  const render = (page: Pages["notFound"], label: string): RenderedPage => ({
    ...pageRef(page, label, pageModules),
    appHtml: renderToString(createElement(App, { Page: page.Page })),
  });
  const live: string[] = [];
  for (const [path, page] of pages.pages) {
    try {
      if (page.loader) live.push(path);
      else rendered.set(path, render(page, path));
    } catch (error) {
      if (onFail === undefined) throw error;
      onFail(path, error);
    }
  }
  // The not-found page stands for every other path: if it throws, the server cannot start.
  const [notFound, error] = [render(pages.notFound, "notFound"), render(pages.error, "error")];
  return { pages: rendered, live, notFound, error };
}

/** The pages with a loader, each rendered per request as a stream of HTML. */
export function livePages({ pages, App, pageModules }: ServerBundle): LivePages {
  const live = new Map<string, LivePage>();
  for (const [path, page] of pages.pages) {
    const { Page, loader } = page;
    if (loader) live.set(path, { ...pageRef(page, path, pageModules), Page, loader });
  }
  return {
    pages: live,
    renderStream: (Page, data, nonce) =>
      renderToReadableStream(createElement(App, { Page, data }), { nonce }),
  };
}
