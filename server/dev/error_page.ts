/**
 * The dev error page (broken build, stopped server, page that threw): where and what. It loads the
 * dev client, so it reloads once a save fixes it. API paths get JSON.
 */
import { stripVTControlCharacters } from "node:util";
import { DEV_PATHS } from "../constants.ts";
import { apiError, isApiPath } from "../api/router.ts";
import { answerText } from "../http/error_pages.ts";
import { escapeHtml } from "../http/html.ts";

/** What went wrong, as the error page shows it. */
export interface Failure {
  /** "Build failed", "The server stopped", "Rendering /about failed". */
  readonly title: string;
  /** The first `file:line:column` in the project, relative to it, if any. */
  readonly where?: string;
  /** The error as the tool printed it: message, code frame, stack. */
  readonly detail: string;
}

// A crash loop must not grow the page without bound.
const MAX_DETAIL_CHARS = 8_000;

/** `text` minus the project's `root` URL, and its first `file:line:column` not in node_modules. */
export function locate(text: string, root: string): { text: string; where?: string } {
  const own = new RegExp(`${RegExp.escape(root)}(?!node_modules/)([^\\s()]+:\\d+:\\d+)`);
  const where = own.exec(text)?.[1];
  return {
    text: text.replaceAll(root, "").trim().slice(-MAX_DETAIL_CHARS),
    ...(where && { where }),
  };
}

/** Why a Deno process stopped: its output's last `error: ...` block, or else the output's end. */
export function denoFailure(output: string, root: string): Failure {
  // Deno colours its errors even into a pipe (unless NO_COLOR): the runner's terminal keeps the
  // colours, the page and its parsing get plain text.
  const plain = stripVTControlCharacters(output);
  const start = [...plain.matchAll(/^error: /gm)].at(-1)?.index ?? 0;
  const { text, where } = locate(plain.slice(start), root);
  return { title: "The server stopped", where, detail: text || "(it printed nothing)" };
}

/** The failure in one line: "Build failed (1 error) at client/main.tsx:3:7". */
export function describe({ title, where }: Failure): string {
  return where ? `${title} at ${where}` : title;
}

/** The answer to any request while `failure` stands: JSON under /api/, else the page (500). */
export function errorResponse(req: Request, failure: Failure): Response {
  const message = describe(failure);
  if (isApiPath(new URL(req.url).pathname)) return apiError(500, message);
  const nonce = crypto.randomUUID();
  const where = failure.where ? `<div class="where">${escapeHtml(failure.where)}</div>\n` : "";
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(message)}</title>
<style nonce="${nonce}">
body { font: 14px/1.5 ui-monospace, monospace; margin: 2rem; background: #141414; color: #f5f5f5; }
h1 { color: #ff6b6b; font-size: 1.3rem; } .where { color: #8ecbff; } pre { white-space: pre-wrap; }
</style>
<script type="module" src="${DEV_PATHS.client}" nonce="${nonce}"></script>
</head>
<body id="dev-error">
<h1>${escapeHtml(failure.title)}</h1>
${where}<pre>${escapeHtml(failure.detail)}</pre>
<p>Fix the file and save: this page reloads by itself.</p>
</body>
</html>
`;
  const csp = `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; ` +
    `connect-src 'self'; base-uri 'none'; frame-ancestors 'none'`;
  return answerText(500, "text/html; charset=utf-8", html, { "content-security-policy": csp });
}
