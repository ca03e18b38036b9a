/**
 * The app's page loaders, by page path (client/routes.tsx): server code run on each request to its
 * page, giving its component the `data` prop (client/page_table.ts `PageProps`); such a page is
 * rendered per request. Only the returned data reaches the browser, never the loader's code.
 *
 * @example
 * export const loaders: Loaders = {
 *   "/account": async (req, ctx) => {
 *     const user = await findUser(req.headers.get("cookie"));
 *     return user ? { name: user.name } : Response.redirect(new URL("/login", req.url), 303);
 *   },
 * };
 */
import type { Loaders } from "./page/handler.ts";

/** Every page loader, by page path. The shell ships none. */
export const loaders: Loaders = {
  // "/account": (req, ctx) => ({ requestId: ctx.requestId }),
};
