/** The tunnel's decisions that need no I/O: refusals and the ingest's headers. */

/** A 4xx/5xx the tunnel answers itself, with a one-line reason. */
export interface Rejection {
  readonly status: number;
  readonly reason: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A 400 with its reason. */
export const badRequest = (reason: string): Rejection => ({ status: 400, reason });

/** Refused whenever no header line can be read. */
export const HEADER_MISSING = badRequest("envelope header line too long or missing");

/** Content encodings whose first line the tunnel can read. */
export type Encoding = "gzip" | "deflate" | "br";

/** Refused when the body does not decode in its declared Content-Encoding. */
export const NOT_DECODABLE = badRequest("envelope body could not be decompressed");

// A Map, not an object: the key is the client's string (`__proto__` must find nothing).
const ENCODINGS = new Map<string, Encoding>(
  [["gzip", "gzip"], ["x-gzip", "gzip"], ["deflate", "deflate"], ["br", "br"]],
);

/** How the body is encoded: null for identity, "unsupported" for anything else. */
export function contentEncoding(value: string | null): Encoding | null | "unsupported" {
  const name = value?.trim().toLowerCase() ?? "";
  if (name === "" || name === "identity") return null;
  return ENCODINGS.get(name) ?? "unsupported";
}

/** Refusals decided from the headers alone; only POST reaches the tunnel (the router's job). */
export function precheck(
  limits: { readonly enabled: boolean; readonly maxBodyBytes: number },
  declared: number | null,
  encoding: Encoding | null | "unsupported",
): Rejection | undefined {
  if (!limits.enabled) return { status: 503, reason: "tunnel disabled: no Sentry DSN configured" };
  if (encoding === "unsupported") {
    return { status: 415, reason: "unsupported Content-Encoding; use gzip, deflate or br" };
  }
  if (declared !== null && declared > limits.maxBodyBytes) return tooLarge(limits.maxBodyBytes);
  return undefined;
}

/** The 413 for a body over the cap. */
export function tooLarge(maxBodyBytes: number): Rejection {
  return { status: 413, reason: `envelope larger than ${maxBodyBytes} bytes` };
}

/** The 429 in the form Sentry's SDKs obey: no category listed stops them all for a while. */
export function rateLimited(retryAfterSeconds: number, whose = "from this client"): Rejection {
  return {
    status: 429,
    reason: `too many envelopes ${whose}; retry later`,
    headers: {
      "retry-after": String(retryAfterSeconds),
      "x-sentry-rate-limits": `${retryAfterSeconds}::organization`,
    },
  };
}

/** The longest User-Agent passed on: real browsers' are under 300 characters, and a client's
 * 400 KB one would otherwise sit in the delivery queue beside each of its envelopes. */
export const MAX_USER_AGENT_CHARS = 512;

/** Headers for the ingest: the envelope type, and the client's encoding, address (if known; see
 * `clientAddress` in server/http/client_address.ts) and agent (cut). */
export function upstreamHeaders(headers: Headers, clientIp: string) {
  const out: Record<string, string> = { "content-type": "application/x-sentry-envelope" };
  const encoding = headers.get("content-encoding");
  if (encoding !== null) out["content-encoding"] = encoding;
  if (clientIp !== "") out["x-sentry-forwarded-for"] = clientIp;
  const userAgent = headers.get("user-agent");
  if (userAgent !== null) out["user-agent"] = userAgent.slice(0, MAX_USER_AGENT_CHARS);
  return out;
}
