/**
 * Headers every response carries, whatever produced it.
 */

/** When to send Strict-Transport-Security. */
export type HstsMode = "auto" | "on" | "off";

// A year, the value browsers' preload lists expect; subdomains are left to the operator.
/** The Strict-Transport-Security value, when it is sent. */
export const HSTS_VALUE = "max-age=31536000";

/** The headers every answer carries, whatever the transport. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "x-content-type-options": "nosniff",
  "referrer-policy": "strict-origin-when-cross-origin",
  "cross-origin-opener-policy": "same-origin",
  // The shell needs none of these powerful features; a screen that does can relax it here.
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
});

const ALWAYS = Object.entries(SECURITY_HEADERS);

/** What the server knows, without asking the client, about how requests reach it. */
export interface Transport {
  /** Every request arrives over TLS: a TLS listener, or a platform that terminates TLS itself. */
  readonly httpsListener: boolean;
  /** X-Forwarded-Proto comes from the operator's own proxy (TRUST_PROXY=true). */
  readonly trustProxy: boolean;
}

/**
 * Whether the request reached us over HTTPS, judged only from how it really arrived.
 *
 * The scheme in `req.url` is not used: over plain HTTP a client can send an absolute-form
 * target (`GET https://a.example/ HTTP/1.1`) and Deno puts that scheme in `req.url`. What counts
 * is the listener (TLS, or Deno Deploy, which terminates TLS before the app) or, with
 * TRUST_PROXY=true only, the first X-Forwarded-Proto value. Should a platform ever pass plain
 * HTTP through, browsers ignore HSTS received over HTTP (RFC 6797, 8.1), so erring there is safe.
 */
export function isHttps(req: Request, transport: Transport): boolean {
  if (transport.httpsListener) return true;
  if (!transport.trustProxy) return false;
  const proto = req.headers.get("x-forwarded-proto");
  if (proto === null) return false;
  const comma = proto.indexOf(",");
  return (comma === -1 ? proto : proto.slice(0, comma)).trim().toLowerCase() === "https";
}

/**
 * Whether this process runs on Deno Deploy (DENO_DEPLOYMENT_ID is set). Deploy grants every
 * permission; elsewhere the variable is not in the allow list, so it is only read if allowed.
 */
export function onDenoDeploy(): boolean {
  const variable = "DENO_DEPLOYMENT_ID";
  if (Deno.permissions.querySync({ name: "env", variable }).state !== "granted") return false;
  return (Deno.env.get(variable) ?? "") !== "";
}

/** Whether Strict-Transport-Security goes on this answer. */
export function hstsDue(options: { https: boolean; hsts: HstsMode }): boolean {
  return options.hsts === "on" || (options.hsts === "auto" && options.https);
}

/**
 * Add the security headers, and HSTS when `hsts`, to a response built without them (in place
 * when its headers are mutable, else to a copy).
 */
export function addSecurityHeaders(res: Response, hsts: boolean): Response {
  let headers = res.headers;
  try {
    headers.set(ALWAYS[0][0], ALWAYS[0][1]);
  } catch {
    // Response.redirect() and fetched responses have immutable headers: copy them.
    res = new Response(res.body, res);
    headers = res.headers;
    headers.set(ALWAYS[0][0], ALWAYS[0][1]);
  }
  for (let i = 1; i < ALWAYS.length; i++) headers.set(ALWAYS[i][0], ALWAYS[i][1]);
  if (hsts) headers.set("strict-transport-security", HSTS_VALUE);
  return res;
}
