/**
 * The HTML document around a page's server-rendered HTML. The page's HTML is fixed when the
 * renderer is created; each request only splices its own parts (nonce, trace meta tags) into
 * the cached template.
 */
import type { Manifest } from "../build/manifest.ts";
import { escapeHtml, serializeJson } from "./html.ts";

/** What differs from one request to the next. */
export interface RequestParts {
  /** CSP nonce for every script and style tag. */
  readonly nonce: string;
  /** Extra `<meta>` tags for `<head>`, already escaped (trace propagation). */
  readonly headTags: string;
}

/** Values the browser reads at start-up; serialized into the page, never baked into the bundle. */
export type ClientConfig = Readonly<Record<string, unknown>>;

/** What is the same for every request to one page. */
export interface RenderOptions {
  readonly title: string;
  /** The page as React rendered it (`renderToString`), placed in `<div id="root">`. */
  readonly appHtml: string;
  readonly clientConfig: ClientConfig;
  /** Development only: one more module script (live reload), with the request's nonce. */
  readonly devScript?: string;
}

const NONCE = "\0nonce\0";
const HEAD = "\0head\0";

/**
 * Build a function that returns the full HTML document for a request.
 *
 * @example
 * const appHtml = renderToString(createElement(App, { page }));
 * const render = createDocumentRenderer(manifest, { title: "App", appHtml, clientConfig: {} });
 * const html = render({ nonce: createNonce(), headTags: "" }); // one request's document
 */
export function createDocumentRenderer(
  manifest: Manifest,
  options: RenderOptions,
): (parts: RequestParts) => string {
  const segments = documentTemplate(manifest, options).split(/(\0nonce\0|\0head\0)/);
  return (parts) => {
    let html = segments[0];
    for (let i = 1; i < segments.length; i += 2) {
      html += (segments[i] === NONCE ? parts.nonce : parts.headTags) + segments[i + 1];
    }
    return html;
  };
}

function documentTemplate(manifest: Manifest, options: RenderOptions): string {
  const nonce = `nonce="${NONCE}"`;
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(options.title)}</title>`,
    HEAD,
    ...manifest.styles.map((href) => `<link rel="stylesheet" href="${escapeHtml(href)}">`),
    `<link rel="modulepreload" href="${escapeHtml(manifest.script)}" ${nonce}>`,
    ...manifest.preload.map((href) =>
      `<link rel="modulepreload" href="${escapeHtml(href)}" ${nonce}>`
    ),
    '<link rel="icon" href="/favicon.svg" type="image/svg+xml">',
    `<script type="application/json" id="app-config" ${nonce}>${
      serializeJson(options.clientConfig)
    }</script>`,
    `<script type="module" src="${escapeHtml(manifest.script)}" ${nonce}></script>`,
    ...(options.devScript
      ? [`<script type="module" src="${escapeHtml(options.devScript)}" ${nonce}></script>`]
      : []),
    "</head>",
    "<body>",
    `<div id="root">${options.appHtml}</div>`,
    "</body>",
    "</html>",
  ].join("\n");
}
