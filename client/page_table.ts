/** The types and lookup behind `routes.tsx`, shared by server and browser so both pick one page. */
import type { ComponentType } from "react";

/** What a page component is given: its loader's data (server/loaders.ts), if it has one. */
export interface PageProps<Data = unknown> {
  readonly data: Data;
}

/** One page: an exact path, what goes in the document's head, and the component in the shell. */
export interface PageRoute {
  /** Exact pathname, as the browser sends it: starts with `/`, no query, no fragment. */
  readonly path: string;
  readonly title: string;
  readonly description?: string;
  /** More `<meta name=... content=...>` tags, by name. */
  readonly meta?: Readonly<Record<string, string>>;
  // deno-lint-ignore no-explicit-any -- each page declares the data its own loader returns
  readonly Page: ComponentType<PageProps<any>>;
}

/** A page for no path of its own: the not-found page, the error page. */
export type SpecialPage = Omit<PageRoute, "path">;

/** What `client/routes.tsx` declares: pages by path, the not-found page, the error page (500). */
export interface Routes {
  readonly pages: ReadonlyMap<string, PageRoute>;
  readonly notFound: SpecialPage;
  readonly error: SpecialPage;
}

/** The page or not-found route that a path resolves to. */
export type ResolvedPage = PageRoute | SpecialPage;

/** Index the pages by path; a malformed or repeated path throws at start-up, not a 404 later. */
export function defineRoutes(declared: {
  readonly pages: readonly PageRoute[];
  readonly notFound: SpecialPage;
  readonly error: SpecialPage;
}): Routes {
  // A Map: the path is the client's, and a plain object answers `__proto__` from its prototype.
  const pages = new Map<string, PageRoute>();
  for (const page of declared.pages) {
    if (!/^\/[^?#\s]*$/.test(page.path)) {
      throw new Error(
        `page path ${JSON.stringify(page.path)}: must start with / (no ?, #, spaces)`,
      );
    }
    if (pages.has(page.path)) throw new Error(`page path ${page.path} is declared twice`);
    pages.set(page.path, page);
  }
  return { pages, notFound: declared.notFound, error: declared.error };
}

/** The page a pathname shows: a declared page, else the not-found page. */
export function resolvePage(routes: Routes, pathname: string): ResolvedPage {
  return routes.pages.get(pathname) ?? routes.notFound;
}
