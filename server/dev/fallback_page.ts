/**
 * What `deno task dev` serves while the server cannot run (a syntax error in client/App.tsx, a
 * module that throws at import, App throwing while the server renders it): every page is the
 * error, with its file, line and message, and `/_dev/reload` stays up so open pages draw the
 * overlay and reload once the next save brings the server back.
 *
 * It runs inside the runner (server/tasks/dev.ts), whose modules were loaded before any edit, so no
 * broken project file can break it.
 */
import { DEV_PATHS } from "../constants.ts";
import { plainError } from "../http/error_pages.ts";
import { isBadTarget, parseRequestTarget } from "../http/request_target.ts";
import { escapeHtml } from "../page/html.ts";
import { serveDevClient } from "./client_script.ts";
import { type BuildError, ReloadChannel } from "./reload.ts";

/** The fallback's request handler for one failure, and a way to end its open streams. */
export interface FallbackApp {
  readonly handler: (req: Request) => Response | Promise<Response>;
  close(): void;
}

/**
 * Build the handler that answers every request with `failure`: pages get the error page (500),
 * other methods a one-line 503, and the dev routes work as on the real server.
 *
 * @example
 * const { handler } = createFallbackApp({ text: "SyntaxError: ...", file: "client/App.tsx", line: 3 });
 */
export function createFallbackApp(failure: BuildError): FallbackApp {
  const channel = new ReloadChannel({ status: null, buildId: "", serverError: failure });
  const handler = (req: Request): Response | Promise<Response> => {
    // Parsed as the app parses it: a bad Host must not throw here either.
    const target = parseRequestTarget(req.url, req.headers.get("host"));
    const pathname = isBadTarget(target) ? "" : target.path;
    const read = req.method === "GET" || req.method === "HEAD";
    if (read && pathname === DEV_PATHS.reload) return channel.handler();
    if (read && pathname === DEV_PATHS.client) return serveDevClient();
    if (!read) {
      return plainError(503, `The dev server is not running: ${failure.text}`);
    }
    const nonce = crypto.randomUUID();
    return new Response(renderFailurePage(failure, nonce), {
      status: 500,
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy":
          `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; ` +
          `connect-src 'self'; base-uri 'none'; frame-ancestors 'none'`,
      },
    });
  };
  return { handler, close: () => channel.close() };
}

/** `file:line:column` of an error, or "" when it has no file. */
export function formatLocation(error: BuildError): string {
  if (error.file === undefined) return "";
  return [error.file, error.line, error.column].filter((p) => p !== undefined).join(":");
}

/**
 * The error page: readable without JavaScript; the dev client script then draws the same
 * overlay as for a build error and reloads the page when the server is back.
 */
export function renderFailurePage(failure: BuildError, nonce: string): string {
  const where = formatLocation(failure);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Server error: ${escapeHtml(failure.text)}</title>
<style nonce="${nonce}">
body { font: 14px/1.5 ui-monospace, monospace; margin: 2rem; background: #141414; color: #f5f5f5; }
h1 { color: #ff6b6b; font-size: 1.3rem; } .where { color: #8ecbff; } pre { white-space: pre-wrap; }
</style>
<script type="module" src="${DEV_PATHS.client}" nonce="${nonce}"></script>
</head>
<body>
<h1>The server failed to start</h1>
${where ? `<div class="where">${escapeHtml(where)}</div>\n` : ""}<div>${
    escapeHtml(failure.text)
  }</div>
${failure.lineText ? `<pre>${escapeHtml(failure.lineText)}</pre>\n` : ""}${
    failure.stack ? `<pre>${escapeHtml(failure.stack)}</pre>\n` : ""
  }<p>Fix the file and save: the page reloads by itself.</p>
</body>
</html>
`;
}
