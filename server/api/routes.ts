/** The app's API routes; each gets the pages' security headers, log, tracing and error reports. */
import type { ApiRoutes } from "./router.ts";

/** Every API route, by exact path, then method. The shell ships none. */
export const apiRoutes: ApiRoutes = {
  // "/api/hello": { GET: () => Response.json({ hello: "world" }) },
};
