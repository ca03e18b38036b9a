/** `ctx.json()`: an API request's JSON body within limits every API route shares: its size and
 * nesting, and the body budget (places, bytes, pace). A client's mistake is an ApiError. */
import { type BodyBudget, refusedBody } from "../http/body_budget.ts";
import { contentLength, RequestBody, type StopCause } from "../http/request_body.ts";

/** Deepest nesting of arrays and objects accepted (System.Text.Json's default): deeper JSON
 * parses, but `JSON.stringify` of it, as `Response.json` does, overflows the stack. */
export const MAX_JSON_DEPTH = 64;

/** The memory a JSON body's byte costs until it is parsed: its buffer (which doubles, up to twice
 * its bytes), the decoded string (once, if ASCII) and the parsed value (about once). */
export const JSON_COST = 4;

/** A client's mistake that an API handler's helper refuses: answered as JSON, not reported. */
export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** What `ctx.json()` is built from. */
export interface JsonBodyOptions {
  /** Largest body read (API_MAX_BODY_BYTES). */
  readonly maxBodyBytes: number;
  /** The server's budget for bodies in flight, shared with the tunnel. */
  readonly bodies: BodyBudget;
  /** The content types taken, and how a 415 names them; JSON's by default. */
  readonly types?: { readonly pattern: RegExp; readonly name: string };
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
// Not fatal, and a leading byte order mark dropped, as browsers' `fetch` reads JSON.
const utf8 = new TextDecoder();

/** Build the reader behind every route's `ctx.json()`: `client` is the budget's key (clientKey). */
export function createJsonReader(options: JsonBodyOptions) {
  const { maxBodyBytes: limit, bodies } = options;
  const types = options.types ?? { pattern: JSON_TYPE, name: "application/json" };
  const refusal = (cause: StopCause | undefined): ApiError => {
    if (cause === "too-large") return new ApiError(413, `body larger than ${limit} bytes`);
    const { status, reason, headers } = refusedBody(cause, bodies.limits) ??
      { status: 400, reason: "request body not received" }; // the client broke off its upload
    return new ApiError(status, reason, headers);
  };

  return async (req: Request, client: string): Promise<unknown> => {
    if (!types.pattern.test(req.headers.get("content-type") ?? "")) {
      throw new ApiError(415, `expected a JSON body (content-type: ${types.name})`);
    }
    const declared = contentLength(req.headers);
    if (declared !== null && declared > limit) throw refusal("too-large");
    // Its place is held until it is parsed: what the handler keeps of it is the handler's.
    const body = new RequestBody(req, declared, limit, 0, bodies, client, JSON_COST);
    try {
      const bytes = await body.bytes().catch(() => Promise.reject(refusal(body.cause)));
      if (bytes.byteLength === 0) throw new ApiError(400, "empty body, expected JSON");
      if (nestedDeeperThan(bytes, MAX_JSON_DEPTH)) {
        throw new ApiError(400, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
      }
      return JSON.parse(utf8.decode(bytes));
    } catch (error) {
      throw error instanceof ApiError ? error : new ApiError(400, "malformed JSON body");
    } finally {
      body.release();
    }
  };
}

/** Whether UTF-8 JSON nests arrays and objects deeper than `max` (strings skipped); one pass,
 * so it costs no more than reading the bytes. Only valid JSON matters: JSON.parse judges the rest. */
export function nestedDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === 0x5c) i++; // a backslash escapes the next byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > max) return true;
    } else if (byte === 0x5d || byte === 0x7d) depth--;
  }
  return false;
}
