/** `ctx.json()`: an API request's JSON body within limits every API route shares: its size and
 * nesting, a deadline, and how many bodies are read at once. A client's mistake is an ApiError. */
import { clientShare, createBodySlots } from "../http/body_slots.ts";
import {
  contentLength,
  FRAGMENTED_REASON,
  RequestBody,
  type StopCause,
} from "../http/request_body.ts";

/** Deepest nesting of arrays and objects accepted (System.Text.Json's default): deeper JSON
 * parses, but `JSON.stringify` of it, as `Response.json` does, overflows the stack. */
export const MAX_JSON_DEPTH = 64;

/** Bodies read at once by all API routes; half of them per client while per-client limits are
 * on. Worst case, the bodies in flight hold this many times API_MAX_BODY_BYTES. */
export const API_BODY_SLOTS = 16;

/** How long `ctx.json()` waits for a slot (then 503), then for the whole body (then 408). */
export const API_BODY_WAIT_MS = 10_000;
export const API_BODY_TIMEOUT_MS = 30_000;

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
  /** One client may hold at most half the slots (TUNNEL_RATE_LIMIT on). */
  readonly clientLimits: boolean;
  readonly slots?: number;
  readonly waitMs?: number;
  readonly timeoutMs?: number;
  /** The content types taken, and how a 415 names them; JSON's by default. */
  readonly types?: { readonly pattern: RegExp; readonly name: string };
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;
// Not fatal, and a leading byte order mark dropped, as browsers' `fetch` reads JSON.
const utf8 = new TextDecoder();

/** Build the reader behind every route's `ctx.json()`: `client` is the slot's key (clientKey). */
export function createJsonReader(options: JsonBodyOptions) {
  const { maxBodyBytes: limit } = options;
  const slots = options.slots ?? API_BODY_SLOTS;
  const takeSlot = createBodySlots(slots, clientShare(slots, options.clientLimits));
  const { waitMs = API_BODY_WAIT_MS, timeoutMs = API_BODY_TIMEOUT_MS } = options;
  const types = options.types ?? { pattern: JSON_TYPE, name: "application/json" };
  const refusal = (cause: StopCause | undefined, reading: boolean): ApiError => {
    if (cause === "too-large") return new ApiError(413, `body larger than ${limit} bytes`);
    if (cause === "fragmented") return new ApiError(400, FRAGMENTED_REASON);
    // The client broke off its upload.
    if (cause !== "timeout") return new ApiError(400, "request body not received");
    if (reading) return new ApiError(408, `request body not received within ${timeoutMs} ms`);
    const retry = { "retry-after": "5" };
    return new ApiError(503, "too many request bodies in flight; retry later", retry);
  };

  return async (req: Request, client: string): Promise<unknown> => {
    if (!types.pattern.test(req.headers.get("content-type") ?? "")) {
      throw new ApiError(415, `expected a JSON body (content-type: ${types.name})`);
    }
    const declared = contentLength(req.headers);
    if (declared !== null && declared > limit) throw refusal("too-large", false);
    const body = new RequestBody(req, declared, limit, 0);
    const slot = takeSlot(client);
    let deadline = setTimeout(() => body.stop("timeout"), waitMs);
    let reading = false;
    let bytes: Uint8Array;
    try {
      await body.until(slot.ready);
      clearTimeout(deadline);
      deadline = setTimeout(() => body.stop("timeout"), timeoutMs);
      reading = true;
      bytes = await body.bytes();
    } catch {
      throw refusal(body.cause, reading);
    } finally {
      clearTimeout(deadline);
      slot.release();
      body.release();
    }
    if (bytes.byteLength === 0) throw new ApiError(400, "empty body, expected JSON");
    if (nestedDeeperThan(bytes, MAX_JSON_DEPTH)) {
      throw new ApiError(400, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
    }
    try {
      return JSON.parse(utf8.decode(bytes));
    } catch {
      throw new ApiError(400, "malformed JSON body");
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
