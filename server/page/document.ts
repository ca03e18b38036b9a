/**
 * The HTML document around a page's server-rendered HTML. The page's HTML is fixed when the
 * renderer is created and encoded once; each request only copies those bytes and its own parts
 * (nonce, trace meta tags) into one new buffer, with no string building or re-encoding.
 */
import type { Manifest } from "../build/manifest.ts";
import { escapeHtml, serializeJson } from "../http/html.ts";

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
 * Build a function that returns the full HTML document for a request, as UTF-8 bytes.
 *
 * @example
 * const appHtml = renderToString(createElement(App, { page }));
 * const render = createDocumentRenderer(manifest, { title: "App", appHtml, clientConfig: {} });
 * const body = render({ nonce: createNonce(), headTags: "" }); // one request's document
 */
export function createDocumentRenderer(
  manifest: Manifest,
  options: RenderOptions,
): (parts: RequestParts) => Uint8Array<ArrayBuffer> {
  const pieces = documentTemplate(manifest, options).split(/(\0nonce\0|\0head\0)/);
  // Even pieces are fixed text, odd ones say which part goes between them.
  const fixed = pieces.filter((_, i) => i % 2 === 0).map((text) => encoder.encode(text));
  const isNonce = pieces.filter((_, i) => i % 2 === 1).map((slot) => slot === NONCE);
  const fixedLength = fixed.reduce((sum, bytes) => sum + bytes.length, 0);
  const nonces = isNonce.filter(Boolean).length;
  const heads = isNonce.length - nonces;
  return (parts) => {
    const { nonce, headTags } = parts;
    // Room for the worst case (UTF-8 takes at most 3 bytes per UTF-16 unit); the answer is the
    // bytes written, a view of their length. Measuring the parts first cost more than the spare
    // room: a scan of the ~320-character trace meta tags was about 2 µs of a traced page's CPU.
    const out = new Uint8Array(
      fixedLength + 3 * (nonces * nonce.length + heads * headTags.length),
    );
    out.set(fixed[0]);
    let at = fixed[0].length;
    // Each part is encoded once, where it first goes; its other places copy those bytes.
    let nonceAt = -1;
    let nonceBytes = 0;
    let headAt = -1;
    let headBytes = 0;
    for (let i = 0; i < isNonce.length; i++) {
      if (isNonce[i]) {
        if (nonceAt === -1) {
          nonceAt = at;
          nonceBytes = encoder.encodeInto(nonce, out.subarray(at)).written;
        } else out.copyWithin(at, nonceAt, nonceAt + nonceBytes);
        at += nonceBytes;
      } else {
        if (headAt === -1) {
          headAt = at;
          headBytes = encoder.encodeInto(headTags, out.subarray(at)).written;
        } else out.copyWithin(at, headAt, headAt + headBytes);
        at += headBytes;
      }
      out.set(fixed[i + 1], at);
      at += fixed[i + 1].length;
    }
    return at === out.length ? out : out.subarray(0, at);
  };
}

const encoder = new TextEncoder();

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
