/**
 * The tunnel's decisions that need no I/O: what to refuse before reading, how a cut-short
 * transfer is answered, which client address counts, and what of the ingest's answer may
 * reach the app's origin.
 */
import type { HeadFormat } from "./header_decode.ts";
import type { StopCause } from "./body.ts";

/** A 4xx/5xx the tunnel answers itself, with a one-line reason. */
export interface Rejection {
  readonly status: number;
  readonly reason: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What {@link precheck} needs to know about the tunnel's configuration. */
export interface PrecheckLimits {
  readonly enabled: boolean;
  readonly maxBodyBytes: number;
}

/** Refused whenever no header line can be read. */
export const HEADER_MISSING: Rejection = {
  status: 400,
  reason: "envelope header line too long or missing",
};

/** Refused when the body does not decode in its declared Content-Encoding. */
export const NOT_DECODABLE: Rejection = {
  status: 400,
  reason: "envelope body could not be decompressed",
};

const ENVELOPE_CONTENT_TYPE = "application/x-sentry-envelope";

// A Map, not an object: the key is the client's Content-Encoding.
const FORMATS = new Map<string, HeadFormat>([
  ["gzip", "gzip"],
  ["x-gzip", "gzip"],
  ["deflate", "deflate"],
  ["br", "br"],
]);

/**
 * How the body is encoded: null for identity, "unsupported" for anything else.
 *
 * @example
 * decoderFormat("x-gzip"); // "gzip"
 */
export function decoderFormat(encoding: string | null): HeadFormat | null | "unsupported" {
  const name = encoding?.trim().toLowerCase() ?? "";
  if (name === "" || name === "identity") return null;
  return FORMATS.get(name) ?? "unsupported";
}

/**
 * A Content-Length that is a plain decimal number of at most 15 digits, else null. The same
 * number repeated (`42, 42`: the field sent twice, which Deno joins; it refuses differing ones)
 * is that number, as RFC 9110 (8.6) allows.
 *
 * @example
 * contentLength(new Headers({ "content-length": "42, 42" })); // 42
 */
export function contentLength(headers: Headers): number | null {
  const value = headers.get("content-length");
  if (value === null) return null;
  if (PLAIN_LENGTH.test(value)) return Number(value);
  if (!REPEATED_LENGTH.test(value)) return null;
  // Compared as numbers, as Deno frames the body: it takes `61` and `061` as one length.
  const [first, ...rest] = value.split(",").map(Number);
  return rest.every((length) => length === first) ? first : null;
}

const PLAIN_LENGTH = /^\d{1,15}$/;
const REPEATED_LENGTH = /^\d{1,15}(?:[ \t]*,[ \t]*\d{1,15})+$/;

/**
 * Rejections decided from the headers alone, before any body byte is read. The method is the
 * router's to check: only POST reaches the tunnel.
 */
export function precheck(
  limits: PrecheckLimits,
  declaredBytes: number | null,
  format: HeadFormat | null | "unsupported",
): Rejection | undefined {
  if (!limits.enabled) {
    return { status: 503, reason: "tunnel disabled: no Sentry DSN configured" };
  }
  if (format === "unsupported") {
    return { status: 415, reason: "unsupported Content-Encoding; use gzip, deflate or br" };
  }
  if (declaredBytes !== null && declaredBytes > limits.maxBodyBytes) {
    return { status: 413, reason: `envelope larger than ${limits.maxBodyBytes} bytes` };
  }
  return undefined;
}

/**
 * The 429 for a client over its envelope budget, in the form Sentry's SDKs obey: they stop
 * sending every category (empty category list) for `retryAfterSeconds`.
 */
export function rateLimited(retryAfterSeconds: number): Rejection {
  return {
    status: 429,
    reason: "too many envelopes from this client; retry later",
    headers: {
      "retry-after": String(retryAfterSeconds),
      "x-sentry-rate-limits": `${retryAfterSeconds}::organization`,
    },
  };
}

/** How a transfer was cut short, mapped to the client's answer. */
export function stoppedRejection(
  cause: StopCause | undefined,
  sentWhole: boolean,
  limits: { readonly maxBodyBytes: number; readonly timeoutMs: number },
): Rejection {
  switch (cause) {
    case "too-large":
      return { status: 413, reason: `envelope larger than ${limits.maxBodyBytes} bytes` };
    case "timeout":
      return sentWhole
        ? { status: 504, reason: `ingest did not answer within ${limits.timeoutMs} ms` }
        : { status: 408, reason: `envelope body not received within ${limits.timeoutMs} ms` };
    default:
      // "client", or "abandoned" (the exchange ended first): nobody reads this answer; the
      // status only labels the log line.
      return { status: 400, reason: "client closed the connection before the body was complete" };
  }
}

// Only something shaped like an IPv4/IPv6 address is passed on; Sentry uses it for geo-IP and
// rate limits, so a free-form header value must not be able to pose as one.
const IP_ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;

/**
 * The browser's address: the socket peer, or behind a trusted proxy the last X-Forwarded-For
 * entry, the address that proxy saw. Entries before it are the client's to write (nginx's
 * `$proxy_add_x_forwarded_for` appends to what the client sent), so a first entry would let a
 * client pick its own address: a new one per envelope escapes the rate limit, and Sentry would
 * record it. Both X-Sentry-Forwarded-For and the rate limit use it.
 */
export function clientAddress(
  headers: Headers,
  addr: Deno.Addr,
  trustProxy: boolean,
): string | undefined {
  if (trustProxy) {
    const forwarded = headers.get("x-forwarded-for");
    const last = forwarded?.slice(forwarded.lastIndexOf(",") + 1).trim();
    if (last !== undefined && IP_ADDRESS.test(last)) return last;
  }
  return "hostname" in addr ? addr.hostname : undefined;
}

/**
 * Headers for the upstream request. A plain record rather than a Headers object: fetch copies
 * and validates either way, and the record skips building one more Headers per envelope.
 */
export function upstreamHeaders(
  headers: Headers,
  clientIp: string | undefined,
): Record<string, string> {
  const out: Record<string, string> = { "content-type": ENVELOPE_CONTENT_TYPE };
  const encoding = headers.get("content-encoding");
  if (encoding !== null) out["content-encoding"] = encoding;
  if (clientIp !== undefined) out["x-sentry-forwarded-for"] = clientIp;
  const userAgent = headers.get("user-agent");
  if (userAgent !== null) out["user-agent"] = userAgent;
  return out;
}

// Everything else the ingest answers (Set-Cookie, HSTS, CORS...) must not reach the app's origin.
const RELAYED_HEADERS = ["retry-after", "x-sentry-rate-limits"];
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** What the browser gets from an ingest's answer. */
export interface Relay {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Relay the ingest's body as is (its JSON); otherwise `text` is the body. */
  readonly passBody: boolean;
  readonly text: string;
}

/**
 * Decide what of the ingest's answer reaches the browser: the status, Retry-After and
 * X-Sentry-Rate-Limits, and the body only when it is the JSON the ingest sends. Anything else
 * (an HTML error page from a proxy in front of the ingest, say) becomes a one-line text reason,
 * so the app's origin never serves markup it did not write.
 *
 * @example
 * relayFor(502, new Headers({ "content-type": "text/html" })).text; // "ingest answered 502\n"
 */
export function relayFor(
  status: number,
  upstream: Headers,
): Relay {
  const passBody = JSON_TYPE.test(upstream.get("content-type") ?? "");
  const headers: Record<string, string> = {
    "content-type": passBody ? "application/json" : "text/plain; charset=utf-8",
  };
  for (const name of RELAYED_HEADERS) {
    const value = upstream.get(name);
    if (value !== null) headers[name] = value;
  }
  return { status, headers, passBody, text: passBody ? "" : `ingest answered ${status}\n` };
}
