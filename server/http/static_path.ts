/**
 * Map a request's URL path to a file path inside the static folder, or refuse it.
 * Pure: it never touches the file system, so every traversal trick is testable on its own.
 */

/**
 * The relative file path (`build/main-AB12.js`) for a URL pathname, or `null` when the path
 * could leave the static folder or name something that is never served (dot files).
 *
 * @example
 * resolveStaticPath("/build/main-AB12.js"); // "build/main-AB12.js"
 * resolveStaticPath("/%2e%2e/deno.json");   // null
 */
export function resolveStaticPath(pathname: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return null; // malformed percent-encoding
  }
  // An encoded slash or backslash would let one URL segment become several path segments.
  if (/%2f|%5c/i.test(pathname) || decoded.includes("\\") || decoded.includes("\0")) return null;
  if (!decoded.startsWith("/") || decoded.startsWith("//")) return null;
  const segments = decoded.slice(1).split("/");
  for (const segment of segments) {
    // Empty segments (`a//b`), `.`, `..` and dot files (`.env`, `.manifest.json`) are refused.
    if (segment === "" || segment.startsWith(".")) return null;
    // Windows drive letters and reserved characters have no business in a URL path here.
    if (/[:*?"<>|]/.test(segment) || hasControlCharacter(segment)) return null;
  }
  return segments.join("/");
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
