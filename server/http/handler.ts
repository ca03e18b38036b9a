/**
 * The signatures the request path shares: a function `Deno.serve` could call, and the same with
 * the request's context, which the app hands its own handlers. A leaf module (a type import of
 * the context aside), so routes, monitoring and the entries can name them without the app.
 */

import type { RequestContext } from "./request_context.ts";

/** A request handler, as `Deno.serve` calls it. */
export type Handler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
) => Response | Promise<Response>;

/** A handler inside the app, which also gets the request's context. */
export type ContextHandler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
  ctx: RequestContext,
) => Response | Promise<Response>;
