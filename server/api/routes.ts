/**
 * The app's API routes: a handler added here answers at its exact `/api/` path, with the pages'
 * security headers, request log, tracing and error reporting (README: "Building on the shell").
 */
import type { ApiRoutes } from "./router.ts";

/** Every API route, by exact path, then method. The shell ships none. */
export const apiRoutes: ApiRoutes = {
  // "/api/hello": { GET: () => Response.json({ hello: "world" }) },
};
