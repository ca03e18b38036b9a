/** The HTML document around a page (head, `<div id="root">`, a loader's data as inert JSON); all
 * but the request's nonce and trace tags is written once per page. */
import type { Manifest } from "../build/manifest.ts";
import { escapeHtml, serializeJson } from "../http/html.ts";
import type { RenderedPage } from "./rendered_pages.ts";

/** What differs from one request to the next. */
export interface RequestParts {
  readonly nonce: string;
  /** Extra `<meta>` tags for `<head>`, already escaped (trace propagation). */
  readonly headTags: string;
}

/** What is the same for every request to one page, besides the page itself. */
export interface DocumentOptions {
  /** Values the browser reads at start-up (client/config.ts), never baked into the bundle. */
  readonly clientConfig: Readonly<Record<string, unknown>>;
  /** Development only: one more module script (live reload), with the request's nonce. */
  readonly devScript?: string;
}

const NONCE = "\0nonce\0";
const HEAD = "\0head\0";

/** Build a function that writes one request's document (`start + appHtml + end(data)`): the
 * shell's script and styles, and the page's own chunk, which `#root` names for hydration. */
export function documentShell(
  manifest: Manifest,
  page: Omit<RenderedPage, "appHtml">,
  options: DocumentOptions,
): (parts: RequestParts) => { readonly start: string; end(data?: unknown): string } {
  const nonce = `nonce="${NONCE}"`;
  // The build wrote both the page and its chunk; Object.hasOwn, as the name is the team's.
  const { module = "", component = "" } = page;
  const chunk = Object.hasOwn(manifest.pages, module) ? manifest.pages[module] : undefined;
  const pageScripts = chunk ? [chunk.script, ...chunk.preload] : [];
  const names = chunk
    ? ` data-page="${escapeHtml(chunk.script)}" data-component="${escapeHtml(component)}"`
    : "";
  const script = (src: string) =>
    `<script type="module" src="${escapeHtml(src)}" ${nonce}></script>`;
  const start = [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(page.title)}</title>`,
    ...Object.entries({ description: page.description, ...page.meta })
      .filter(([, content]) => content !== undefined)
      .map(([name, content]) =>
        `<meta name="${escapeHtml(name)}" content="${escapeHtml(content!)}">`
      ),
    HEAD,
    ...[...manifest.styles, ...chunk?.styles ?? []].map((href) =>
      `<link rel="stylesheet" href="${escapeHtml(href)}">`
    ),
    ...[manifest.script, ...manifest.preload, ...pageScripts].map((href) =>
      `<link rel="modulepreload" href="${escapeHtml(href)}" ${nonce}>`
    ),
    '<link rel="icon" href="/favicon.svg" type="image/svg+xml">',
    `<script type="application/json" id="app-config" ${nonce}>${
      serializeJson(options.clientConfig)
    }</script>`,
    script(manifest.script),
    ...(options.devScript ? [script(options.devScript)] : []),
    "</head>",
    "<body>",
    `<div id="root"${names}>`,
  ].join("\n");
  const dataScript = (data: unknown) =>
    data === undefined
      ? ""
      : `\n<script type="application/json" id="page-data" ${nonce}>${serializeJson(data)}</script>`;
  const fill = (text: string, parts: RequestParts) =>
    text.replaceAll(NONCE, parts.nonce).replaceAll(HEAD, parts.headTags);
  return (parts) => ({
    start: fill(start, parts),
    end: (data) => fill(`</div>${dataScript(data)}\n</body>\n</html>`, parts),
  });
}
