/**
 * What a team writes its pages and API routes against: `definePage` ties a loader's return type
 * to its page's props; API routes get `ApiContext` and throw `ApiError`.
 */
import type { ComponentProps, ComponentType } from "react";
export { ApiError } from "./api/router.ts";
export type { ApiContext, ApiHandler, ApiRoutes } from "./api/router.ts";

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

/** A page's loader, run on the server per request: its page's data (anything JSON can carry) or a
 * Response to send instead (`Response.redirect(...)`, `ctx.notFound()`). */
export type PageLoader<Data = unknown> = (
  req: Request,
  ctx: LoaderContext,
) => Data | Response | Promise<Data | Response>;

/** What goes in a page's document head. */
export interface PageHead {
  readonly title: string;
  readonly description?: string;
  /** More `<meta name=... content=...>` tags, by name. */
  readonly meta?: Readonly<Record<string, string>>;
}

// deno-lint-ignore no-explicit-any -- definePage has checked each page's props against its data
type AnyPage = ComponentType<any>;

/** A declared page: its exact path (starts with `/`, no query), head, component, and loader. */
export interface PageDeclaration extends PageHead {
  readonly path: string;
  readonly Page: AnyPage;
  readonly loader?: PageLoader;
}

/** A page for no path of its own: the not-found page, the error page; rendered once, no data. */
export interface SpecialPage extends PageHead {
  readonly Page: ComponentType<PageProps>;
}

/** The app's pages by exact path, the page for every other path, and the error page (500). */
export interface Pages {
  readonly pages: ReadonlyMap<string, PageDeclaration>;
  readonly notFound: SpecialPage;
  readonly error: SpecialPage;
}

type NeedsNoData<Path extends string, C extends AnyPage> = PageProps extends ComponentProps<C>
  ? unknown
  : `page ${Path} needs a loader: its props need data`;

/**
 * Declare a page: its loader's return type is its component's `data`, and a component that needs
 * data does not compile without a loader.
 *
 * @example
 * definePage({ path: "/hi", title: "Hi", loader: () => ({ name: "Ada" }), Page: HiPage });
 */
export function definePage<const Path extends string, C extends AnyPage>(
  page: PageHead & {
    readonly path: Path;
    readonly loader?: undefined;
    readonly Page: C & NoInfer<NeedsNoData<Path, C>>;
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

/** Index the pages by path; a malformed or repeated path throws at start-up, not a 404 later. */
export function definePages(declared: {
  readonly pages: readonly PageDeclaration[];
  readonly notFound: SpecialPage;
  readonly error: SpecialPage;
}): Pages {
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
  return { pages, notFound: declared.notFound, error: declared.error };
}
