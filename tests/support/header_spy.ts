/**
 * Wrap a handler so every request it gets reports a read of its headers: the app reads a served
 * request's headers through server/http/request_headers.ts, and Deno answers more slowly once a
 * handler has touched `req.headers` (see there). Two signs are watched: a read of the public
 * `headers` getter, and Deno's own cache of the request's Headers (filled also by internal
 * reads, such as `req.clone()`), checked when the answer is ready.
 */
import type { Handler } from "../../server/http/handler.ts";

/** The wrapped handler and the paths of the requests whose headers were read. */
export function spyOnHeaders(handler: Handler): { handler: Handler; touched: string[] } {
  const touched: string[] = [];
  const headersOf = Object.getOwnPropertyDescriptor(Request.prototype, "headers")!.get!;
  const spied: Handler = (req, info) => {
    const path = new URL(req.url).pathname;
    let read = false;
    Object.defineProperty(req, "headers", {
      get() {
        read = true;
        return headersOf.call(req);
      },
    });
    const check = (res: Response) => {
      if (read || headersCached(req)) touched.push(path);
      return res;
    };
    const res = handler(req, info);
    return res instanceof Promise ? res.then(check) : check(res);
  };
  return { handler: spied, touched };
}

// Deno keeps the request's Headers under its own symbol once anything built them.
function headersCached(req: Request): boolean {
  const key = Object.getOwnPropertySymbols(req).find((s) => s.description === "headers cache");
  return key !== undefined && (req as unknown as Record<symbol, unknown>)[key] !== undefined;
}
