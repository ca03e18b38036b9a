/** What a team writes its pages and API routes against (server/pages.ts, server/api/routes.ts):
 * `definePage` ties a loader's return type to its page's props. */
import type { ComponentProps, ComponentType } from "react";
export { type ApiContext, ApiError, type ApiHandler, type ApiRoutes } from "./api/router.ts";

/** What a page component is given: its loader's data (`undefined` for a page without one). */
export interface PageProps<Data = undefined> {
  readonly data: Data;
}

/** What a page's loader gets besides the request. */
export interface LoaderContext {
  readonly requestId: string;
  /** The client's address: the socket's, or with TRUST_PROXY the proxy's X-Forwarded-For. */
  readonly clientAddress: string;
  /** Answer the app's not-found page (404) instead: `return ctx.notFound();`. */
  notFound(): Response;
}

/** A page's loader, run on the server per request: its page's data (what JSON can carry) or a
 * Response instead (`Response.redirect(...)`, `ctx.notFound()`). */
export type PageLoader<Data = unknown> = (
  req: Request,
  ctx: LoaderContext,
) => Data | Response | Promise<Data | Response>;

/** What goes in a page's document head; `meta` adds `<meta name=... content=...>` tags. */
export interface PageHead {
  readonly title: string;
  readonly description?: string;
  readonly meta?: Readonly<Record<string, string>>;
}

/** A declared page: its exact path (starts with `/`, no query), head, component, and loader. */
export interface PageDeclaration extends PageHead {
  readonly path: string;
  // deno-lint-ignore no-explicit-any -- definePage has checked the props against the loader
  readonly Page: ComponentType<any>;
  readonly loader?: PageLoader;
}

/** The app's pages by exact path, and two rendered once with no data: the page for every other
 * path, and the error page (500). */
export interface Pages {
  readonly pages: ReadonlyMap<string, PageDeclaration>;
  readonly notFound: PageHead & { readonly Page: ComponentType<PageProps> };
  readonly error: Pages["notFound"];
}

/**
 * Declare a page: its loader's return type is its component's `data`, and a component that needs
 * data does not compile without a loader.
 *
 * @example
 * definePage({ path: "/hi", title: "Hi", loader: () => ({ name: "Ada" }), Page: HiPage });
 */
export function definePage<const Path extends string, C extends PageDeclaration["Page"]>(
  page: PageHead & {
    readonly path: Path;
    readonly loader?: undefined;
    readonly Page: C & NoInfer<PageProps extends ComponentProps<C> ? unknown : NeedsLoader<Path>>;
  },
): PageDeclaration;
export function definePage<Data>(
  page: PageHead & {
    readonly path: string;
    readonly loader: PageLoader<Data>;
    readonly Page: ComponentType<PageProps<Data>>;
  },
): PageDeclaration;
export function definePage(page: PageDeclaration): PageDeclaration {
  return page;
}

type NeedsLoader<Path extends string> = `page ${Path} needs a loader: its props need data`;

/** Index the pages by path; a malformed or repeated path throws at start-up, not a 404 later. */
export function definePages(declared: Omit<Pages, "pages"> & { pages: PageDeclaration[] }): Pages {
  // A Map: the path is the client's, and a plain object answers `__proto__` from its prototype.
  const pages = new Map<string, PageDeclaration>();
  for (const page of declared.pages) {
    if (!/^\/[^?#\s]*$/.test(page.path)) {
      throw new Error(
        `page path ${JSON.stringify(page.path)}: must start with / (no ?, #, spaces)`,
      );
    }
    if (pages.has(page.path)) throw new Error(`page path ${page.path} is declared twice`);
    pages.set(page.path, page);
  }
  return { ...declared, pages };
}
