/** Error pages and plain answers, never with internal detail, and the last resort for what escapes
 * the app's handler: logged and answered 500, not reported to Sentry (a client may cause it). */
import { escapeHtml } from "./html.ts";
import { defaultFailureLog } from "./failure_log.ts";
import type { Handler } from "./request_context.ts";

/** `text` as a `type` answer, never cached, with its length (each set over any in `init`). */
export function answerText(status: number, type: string, text: string, init: HeadersInit = {}) {
  const body = new TextEncoder().encode(text);
  const headers = new Headers(init);
  headers.set("content-type", type);
  headers.set("cache-control", "no-store");
  headers.set("content-length", String(body.length));
  return new Response(body, { status, headers });
}

// These pages run nothing and load nothing.
const PAGE_CSP = "default-src 'none'; base-uri 'none'; frame-ancestors 'none'";

function page(status: number, title: string, message: string, headers = {}) {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${status} ${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p><p><a href="/">Home</a></p></body>
</html>
`;
  const csp = { "content-security-policy": PAGE_CSP };
  return answerText(status, "text/html; charset=utf-8", html, { ...headers, ...csp });
}

/** 404 page for a path nothing answers. */
export function notFound(): Response {
  return page(404, "Not found", "There is nothing at this address.");
}

/** 405 with the methods the path does answer. */
export function methodNotAllowed(allow: readonly string[]): Response {
  const methods = allow.join(", ");
  return page(405, "Method not allowed", `This address answers ${methods}.`, { allow: methods });
}

/** Generic 500 page: the details go to logs and monitoring, never to the client. */
export function internalError(): Response {
  return page(500, "Something went wrong", "The error has been recorded. Please try again.");
}

/** A plain-text answer with a one-line reason, for requests refused before routing. */
export function plainError(status: number, reason: string): Response {
  return answerText(status, "text/plain; charset=utf-8", reason + "\n");
}

/** Log `error` and return the generic 500 page (for `Deno.serve`'s `onError`). */
export function lastResortResponse(error: unknown): Response {
  defaultFailureLog().failed("request failed outside the app's handler:", error);
  return internalError();
}

/** `handler`, answering {@link lastResortResponse} on a throw: `deno serve` ignores `onError`. */
export function withLastResort(handler: Handler): Handler {
  return (req, info) => answerOrElse(() => handler(req, info), lastResortResponse);
}

/** `answer()`, or `onError`'s answer when it throws or rejects; synchronous when `answer` is. */
export function answerOrElse(
  answer: () => Response | Promise<Response>,
  onError: (error: unknown) => Response,
): Response | Promise<Response> {
  try {
    const res = answer();
    return res instanceof Promise ? res.catch(onError) : res;
  } catch (error) {
    return onError(error);
  }
}
