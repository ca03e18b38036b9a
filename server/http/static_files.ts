/** `static/`, served with ETags, caching and precompressed copies; only files indexed at start-up
 * (no link, dot file or, unless enabled, source map) are served, however the path is encoded. */
import { compressCopies, ENCODED_SUFFIX, type Encoding, isCompressible } from "./compress.ts";
import type { AnswerBody, RequestContext } from "./request_context.ts";
import { listFiles } from "../walk_files.ts";
import { BUILD_DIR, STATIC_DIR } from "../constants.ts";

/** One representation of a file: the original or a precompressed copy. */
interface Variant {
  readonly file: string;
  readonly size: number;
  readonly etag: string;
  /** Kept in memory when small, so hot assets never touch the disk. */
  readonly body?: Uint8Array<ArrayBuffer>;
}

interface StaticEntry {
  readonly contentType: string;
  readonly cacheControl: string;
  readonly identity: Variant;
  readonly encoded: ReadonlyMap<Encoding, Variant>;
}

/** URL path (decoded, without the leading slash) -> entry. */
export type StaticIndex = ReadonlyMap<string, StaticEntry>;

// The build's output ("build/"): its names carry a content hash, so a URL's bytes never change.
const BUILD_PREFIX = `${BUILD_DIR.slice(STATIC_DIR.length + 1)}/`;
const IMMUTABLE = "public, max-age=31536000, immutable";
// Unhashed files (favicon, robots.txt) may change with a deploy: revalidate after 5 minutes.
const SHORT = "public, max-age=300";
// Files up to this size are kept in memory (and compressed while indexing if none is on disk).
const IN_MEMORY_LIMIT = 1024 * 1024;
// Smaller files are served as they are: a copy saves less than the answer's headers weigh.
const MIN_COMPRESSED_BYTES = 1024;

// A Map: the extension comes from a file name, and `constructor` must not find a function.
const CONTENT_TYPES: ReadonlyMap<string, string> = new Map(Object.entries({
  css: "text/css; charset=utf-8",
  html: "text/html; charset=utf-8",
  ico: "image/x-icon",
  jpeg: "image/jpeg",
  jpg: "image/jpeg",
  js: "text/javascript; charset=utf-8",
  json: "application/json",
  map: "application/json",
  png: "image/png",
  svg: "image/svg+xml",
  txt: "text/plain; charset=utf-8",
  wasm: "application/wasm",
  webmanifest: "application/manifest+json",
  webp: "image/webp",
  woff2: "font/woff2",
}));

/** The Content-Type for a file name, by extension. */
export function contentTypeFor(name: string): string {
  const ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return CONTENT_TYPES.get(ext) ?? "application/octet-stream";
}

/** Walk `dir` (symbolic links are not followed) and index every servable file. */
export async function indexStaticFiles(
  dir: string,
  options: { serveSourceMaps: boolean },
): Promise<StaticIndex> {
  const files = new Set(await listFiles(dir));
  const index = new Map<string, StaticEntry>();
  for (const path of files) {
    if (isEncodedCopy(path, files)) continue;
    if (path.endsWith(".map") && !options.serveSourceMaps) continue;
    if (path.split("/").some((segment) => segment.startsWith("."))) continue;
    const identity = await readVariant(`${dir}/${path}`);
    const encoded = new Map<Encoding, Variant>();
    for (const [encoding, suffix] of ENCODED_SUFFIX) {
      if (files.has(path + suffix)) {
        encoded.set(encoding, await readVariant(`${dir}/${path}${suffix}`));
      }
    }
    // The build decides for its own outputs (a dev build skips compression to rebuild fast).
    const ownedByBuild = path.startsWith(BUILD_PREFIX);
    if (
      encoded.size === 0 && identity.body && identity.size >= MIN_COMPRESSED_BYTES &&
      isCompressible(path) && !ownedByBuild
    ) {
      for (const [encoding, bytes] of await compressCopies(identity.body, { best: false })) {
        encoded.set(encoding, await variantOf(identity.file, bytes, true));
      }
    }
    const cacheControl = ownedByBuild ? IMMUTABLE : SHORT;
    index.set(path, { contentType: contentTypeFor(path), cacheControl, identity, encoded });
  }
  return index;
}

/** Answer a GET or HEAD for a static file, or `null` when no such file is served. */
export function serveStatic(
  index: StaticIndex,
  req: Request,
  pathname: string,
  ctx: RequestContext,
): Response | Promise<Response> | null {
  const entry = lookUp(index, pathname);
  if (entry === undefined) return null;
  const encodings = [...entry.encoded.keys()];
  const encoding = negotiateEncoding(req.headers.get("accept-encoding"), encodings);
  const variant = (encoding && entry.encoded.get(encoding)) || entry.identity;
  const headers: Record<string, string> = {
    "content-type": entry.contentType,
    "cache-control": entry.cacheControl,
    "etag": variant.etag,
  };
  if (encodings.length > 0) headers["vary"] = "Accept-Encoding";
  if (encoding) headers["content-encoding"] = encoding;
  if (etagMatches(req.headers.get("if-none-match"), variant.etag)) {
    return ctx.send(null, 304, headers, null);
  }
  headers["content-length"] = String(variant.size);
  const send = (body: AnswerBody) => ctx.send(body, 200, headers, variant.size);
  if (req.method === "HEAD") return send(null);
  if (variant.body) return send(variant.body);
  return Deno.open(variant.file).then((file) => send(file.readable));
}

/** Whether `pathname` names a served file (to tell 405 from 404). */
export function hasStaticFile(index: StaticIndex, pathname: string): boolean {
  return lookUp(index, pathname) !== undefined;
}

// Only exact indexed paths are served: whatever decodes to `..`, a dot file or `//` is not found.
function lookUp(index: StaticIndex, pathname: string): StaticEntry | undefined {
  if (!pathname.startsWith("/")) return undefined;
  try {
    return index.get(decodeURIComponent(pathname.slice(1)));
  } catch {
    return undefined; // malformed percent-encoding
  }
}

/** Whether an `If-None-Match` header matches an ETag (weak comparison, RFC 9110 13.1.2). */
export function etagMatches(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((tag) => tag.trim() === "*" || bare(tag) === bare(etag));
}

/** The best encoding (br, then gzip) the client accepts among `available`; `null`: identity. */
export function negotiateEncoding(
  acceptEncoding: string | null,
  available: readonly Encoding[],
): Encoding | null {
  if (!acceptEncoding || available.length === 0) return null;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [coding, ...params] = part.split(";").map((s) => s.trim().toLowerCase());
    let q = 1;
    for (const param of params) {
      const match = /^q=([01](?:\.\d{0,3})?)$/.exec(param);
      if (param.startsWith("q=")) q = match ? Math.min(1, Number(match[1])) : 0;
    }
    // x-gzip is gzip's old name (RFC 9110, 8.4.1.3).
    weights.set(coding === "x-gzip" ? "gzip" : coding, q);
  }
  const weight = (encoding: Encoding) =>
    available.includes(encoding) ? weights.get(encoding) ?? weights.get("*") ?? 0 : 0;
  // Brotli wins a tie: its copies are the smaller.
  const best = weight("gzip") > weight("br") ? "gzip" : "br";
  return weight(best) > 0 ? best : null;
}

function isEncodedCopy(path: string, files: ReadonlySet<string>): boolean {
  return [...ENCODED_SUFFIX.values()].some((suffix) =>
    path.endsWith(suffix) && files.has(path.slice(0, -suffix.length))
  );
}

async function readVariant(file: string): Promise<Variant> {
  const bytes = await Deno.readFile(file);
  return await variantOf(file, bytes, bytes.length <= IN_MEMORY_LIMIT);
}

async function variantOf(file: string, bytes: Uint8Array<ArrayBuffer>, inMemory: boolean) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const etag = `"${digest.subarray(0, 16).toBase64({ omitPadding: true })}"`;
  return { file, size: bytes.length, etag, body: inMemory ? bytes : undefined };
}
