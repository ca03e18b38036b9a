/**
 * Small error pages and plain responses for the cases a user can cause (400, 404, 405, 414,
 * 431) and the one they cannot (500). None of them ever includes internal detail such as a stack trace.
 *
 * The answer of last resort is here too, for `Deno.serve`'s `onError`: whatever escapes the
 * app's own handler (a bug in the handler chain, a wrapper such as the dev server) is logged,
 * within the failure log's limit, and answered with the generic 500 page instead of Deno's bare
 * one. It is not reported to Sentry: it may be a client's doing.
 */
import { escapeHtml } from "./html.ts";
import { defaultFailureLog } from "./failure_log.ts";
import type { Handler } from "./request_context.ts";

const HTML = "text/html; charset=utf-8";

function page(status: number, title: string, message: string, headers: HeadersInit = {}) {
  const body = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${status} ${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><a href="/">Home</a></p></body>
</html>
`;
  const h = new Headers(headers);
  h.set("content-type", HTML);
  h.set("cache-control", "no-store");
  // These pages run nothing and load nothing.
  h.set("content-security-policy", "default-src 'none'; base-uri 'none'; frame-ancestors 'none'");
  const bytes = new TextEncoder().encode(body);
  h.set("content-length", String(bytes.length));
  return new Response(bytes, { status, headers: h });
}

/** 404 page for a path nothing answers. */
export function notFound(): Response {
  return page(404, "Not found", "There is nothing at this address.");
}

/** 405 with the methods the path does answer. */
export function methodNotAllowed(allow: readonly string[]): Response {
  return page(405, "Method not allowed", `This address answers ${allow.join(", ")}.`, {
    allow: allow.join(", "),
  });
}

/** Generic 500 page: the details go to logs and monitoring, never to the client. */
export function internalError(): Response {
  return page(500, "Something went wrong", "The error has been recorded. Please try again.");
}

/** A plain-text answer with a one-line reason, for requests refused before routing. */
export function plainError(status: number, reason: string): Response {
  const bytes = new TextEncoder().encode(reason + "\n");
  return new Response(bytes, {
    status,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
      "content-length": String(bytes.length),
    },
  });
}

/**
 * Log `error` and return the generic 500 page.
 *
 * @example
 * Deno.serve({ onError: lastResortResponse }, handler);
 */
export function lastResortResponse(error: unknown): Response {
  defaultFailureLog().failed("request failed outside the app's handler:", error);
  return internalError();
}

/**
 * `handler`, answering with {@link lastResortResponse} when it throws or rejects. For
 * `deno serve`, whose default export has no `onError` (Deno 2.9.6 ignores one if given).
 */
export function withLastResort(handler: Handler): Handler {
  return (req, info) => {
    try {
      const res = handler(req, info);
      return res instanceof Promise ? res.catch(lastResortResponse) : res;
    } catch (error) {
      return lastResortResponse(error);
    }
  };
}
