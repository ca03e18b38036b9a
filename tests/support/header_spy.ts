/**
 * Wrap a handler so every request it gets reports a read of `req.headers`: the app reads a
 * served request's headers through server/http/request_headers.ts, and Deno answers more slowly
 * once a handler has touched `req.headers` (see there).
 */
import type { Handler } from "../../server/http/handler.ts";

/** The wrapped handler and the paths of the requests whose `req.headers` was read. */
export function spyOnHeaders(handler: Handler): { handler: Handler; touched: string[] } {
  const touched: string[] = [];
  const headersOf = Object.getOwnPropertyDescriptor(Request.prototype, "headers")!.get!;
  const spied: Handler = (req, info) => {
    Object.defineProperty(req, "headers", {
      get() {
        touched.push(new URL(req.url).pathname);
        return headersOf.call(req);
      },
    });
    return handler(req, info);
  };
  return { handler: spied, touched };
}
