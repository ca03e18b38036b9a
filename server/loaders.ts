/**
 * The app's page loaders by page path (client/routes.tsx), run on the server per request: the
 * result is the page's `data` prop (client/page_table.ts `PageProps`); only it reaches the browser.
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
