/**
 * The HTML document around a page's server-rendered HTML. The page's HTML is fixed when the
 * renderer is created and encoded once; each request only copies those bytes and its own parts
 * (nonce, trace meta tags) into one new buffer, with no string building or re-encoding.
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
    const nonce = textPart(parts.nonce);
    const head = textPart(parts.headTags);
    const out = new Uint8Array(fixedLength + nonces * nonce.length + heads * head.length);
    out.set(fixed[0]);
    let at = fixed[0].length;
    for (let i = 0; i < isNonce.length; i++) {
      at = writePart(out, at, isNonce[i] ? nonce : head);
      out.set(fixed[i + 1], at);
      at += fixed[i + 1].length;
    }
    return out;
  };
}

const encoder = new TextEncoder();

// A request's parts are ASCII in practice (base64, hex ids, percent-encoded baggage): those are
// written straight into the document's buffer, their length known in advance; anything else is
// encoded first. A native test and `encodeInto` take ~0.3 µs for the ~320 characters of the
// trace meta tags, a loop over char codes ~1.1 µs.
// Anything but printable ASCII and whitespace goes through the encoder (other control
// characters never occur in these parts; the encoder handles them correctly all the same).
const NOT_ASCII = /[^\x20-\x7e\t\n\r]/;

function textPart(text: string): string | Uint8Array {
  return NOT_ASCII.test(text) ? encoder.encode(text) : text;
}

function writePart(out: Uint8Array, at: number, part: string | Uint8Array): number {
  if (typeof part !== "string") {
    out.set(part, at);
    return at + part.length;
  }
  // A nonce (24 characters) is copied faster by hand than through a subarray.
  if (part.length > 64) return at + encoder.encodeInto(part, out.subarray(at)).written;
  for (let i = 0; i < part.length; i++) out[at + i] = part.charCodeAt(i);
  return at + part.length;
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
