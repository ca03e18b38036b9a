/**
 * Headers every response carries, whatever produced it.
 */

/** When to send Strict-Transport-Security. */
export type HstsMode = "auto" | "on" | "off";

// A year, the value browsers' preload lists expect; subdomains are left to the operator.
const HSTS_VALUE = "max-age=31536000";

const ALWAYS: ReadonlyArray<[string, string]> = [
  ["x-content-type-options", "nosniff"],
  ["referrer-policy", "strict-origin-when-cross-origin"],
  ["cross-origin-opener-policy", "same-origin"],
  // The shell needs none of these powerful features; a screen that does can relax it here.
  ["permissions-policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()"],
];

/**
 * Whether the request reached us over HTTPS: directly (TLS in Deno, or a platform such as
 * Deno Deploy that hands us https URLs), or through a trusted proxy that says so.
 */
export function isHttps(req: Request, trustProxy: boolean): boolean {
  if (req.url.startsWith("https:")) return true;
  return trustProxy && req.headers.get("x-forwarded-proto")?.split(",")[0].trim() === "https";
}

/** Add the security headers to a response (in place when its headers are mutable). */
export function applySecurityHeaders(
  res: Response,
  options: { https: boolean; hsts: HstsMode },
): Response {
  let headers = res.headers;
  try {
    headers.set(ALWAYS[0][0], ALWAYS[0][1]);
  } catch {
    // Response.redirect() and fetched responses have immutable headers: copy them.
    res = new Response(res.body, res);
    headers = res.headers;
  }
  for (const [name, value] of ALWAYS) headers.set(name, value);
  if (options.hsts === "on" || (options.hsts === "auto" && options.https)) {
    headers.set("strict-transport-security", HSTS_VALUE);
  }
  return res;
}
