/**
 * The one signature every part of the request path shares: a function `Deno.serve` could call.
 * A leaf module, so routes, monitoring and the entries can name it without importing the app.
 */

/** A request handler, as `Deno.serve` calls it. */
export type Handler = (
  req: Request,
  info: Deno.ServeHandlerInfo,
) => Response | Promise<Response>;
