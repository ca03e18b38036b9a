/**
 * The app's API routes: add a handler here and it answers at its path, with the same security
 * headers, request log, tracing and error reporting as the pages. Paths are exact and start
 * with `/api/`. See "Building on the shell" in the README.
 */
import type { ApiRoutes } from "./router.ts";

/** Every API route, by exact path, then method. The shell ships none. */
export const apiRoutes: ApiRoutes = {
  // "/api/hello": { GET: () => Response.json({ hello: "world" }) },
};
