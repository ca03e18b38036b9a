/**
 * The app's page loaders: server code that runs on every request to its page and gives the
 * page's component its `data` prop (client/page_table.ts `PageProps`). Keyed by the page's path
 * in client/routes.tsx. A page with a loader is rendered per request, streamed; a page without
 * one is rendered once by the build. Loader code runs only on the server: nothing here reaches
 * the browser's bundle, only the data it returns (serialized into the page, never executed).
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
