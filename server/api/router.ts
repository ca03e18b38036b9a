/** API routes (routes.ts): their context (request id, address, bounded JSON body), JSON errors. */
import { clientAddress, type ContextHandler } from "../http/request_context.ts";

/** Every API path starts with this; an unknown path under it gets a JSON 404, not the page. */
export const API_PREFIX = "/api/";

/** The HTTP methods an API route can answer. */
export type ApiMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What an API handler gets besides the request. */
export interface ApiContext {
  readonly requestId: string;
  /** The client's address: the socket's, or with TRUST_PROXY the proxy's X-Forwarded-For. */
  readonly clientAddress: string;
  /** The body as JSON, up to the size limit; a client's mistake is answered, never a 500: 415
   * unless declared `application/json` (or `…+json`), 413 over the limit, 400 empty/malformed. */
  json<T = unknown>(): Promise<T>;
}

/** An API route's handler. */
export type ApiHandler = (req: Request, ctx: ApiContext) => Response | Promise<Response>;

/** API handlers by exact path, then by method. Keys are written by developers, never clients. */
export type ApiRoutes = Readonly<Record<string, Readonly<Partial<Record<ApiMethod, ApiHandler>>>>>;

/** What the API's context needs from the server's configuration. */
export interface ApiOptions {
  /** Take the client address from X-Forwarded-For (its last entry, the proxy's). */
  readonly trustProxy: boolean;
  /** Largest JSON body `ctx.json()` reads (API_MAX_BODY_BYTES). */
  readonly maxBodyBytes: number;
}

/** A client's mistake that an API handler's helper refuses: answered as JSON, not reported. */
export class ApiError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "ApiError";
  }
}

/** Check the API routes and list them as `[path, handlers by method]`, GET also answering HEAD;
 * a path outside {@link API_PREFIX} or with a query throws, so a typo stops start-up. */
export function apiRouteEntries(
  routes: ApiRoutes,
  options: ApiOptions,
): [path: string, methods: Record<string, ContextHandler>][] {
  return Object.entries(routes).map(([path, methods]) => {
    if (!path.startsWith(API_PREFIX) || /[?#\s]/.test(path)) {
      throw new Error(`API path ${JSON.stringify(path)}: must start with ${API_PREFIX}`);
    }
    const handlers: Record<string, ContextHandler> = {};
    for (const [method, handler] of Object.entries(methods)) {
      if (handler !== undefined) handlers[method] = withContext(handler, options);
    }
    // Deno sends a HEAD answer without its body.
    if (handlers.GET !== undefined) handlers.HEAD ??= handlers.GET;
    if (Object.keys(handlers).length === 0) throw new Error(`API path ${path}: no method`);
    return [path, handlers];
  });
}

function withContext(handler: ApiHandler, options: ApiOptions): ContextHandler {
  return (req, info, ctx) => {
    const api: ApiContext = {
      requestId: ctx.requestId,
      clientAddress: clientAddress(req, info, options.trustProxy),
      json: () => readJson(req, options.maxBodyBytes),
    };
    try {
      const res = handler(req, api);
      return res instanceof Promise ? res.catch(refusal) : res;
    } catch (error) {
      return refusal(error);
    }
  };
}

// An ApiError becomes its answer; anything else is the app's fault, for the app to report.
function refusal(error: unknown): Response {
  if (error instanceof ApiError) return apiError(error.status, error.message);
  throw error;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

async function readJson<T>(req: Request, limit: number): Promise<T> {
  if (!JSON_TYPE.test(req.headers.get("content-type") ?? "")) {
    throw new ApiError(415, "expected a JSON body (content-type: application/json)");
  }
  const tooLarge = () => new ApiError(413, `body larger than ${limit} bytes`);
  if (Number(req.headers.get("content-length") ?? 0) > limit) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of req.body ?? []) {
      size += chunk.length;
      // Leaving the loop cancels the body: nothing past the limit is read.
      if (size > limit) throw tooLarge();
      chunks.push(chunk);
    }
  } catch (error) {
    // The client broke off its upload: its doing, not the app's.
    throw error instanceof ApiError ? error : new ApiError(400, "request body not received");
  }
  if (size === 0) throw new ApiError(400, "empty body, expected JSON");
  try {
    // Blob.text() decodes UTF-8 and drops a leading byte order mark, as browsers send it.
    return JSON.parse(await new Blob(chunks as BlobPart[]).text());
  } catch {
    throw new ApiError(400, "malformed JSON body");
  }
}

/** Whether a request path belongs to the API (and so gets JSON errors). */
export function isApiPath(path: string): boolean {
  return path.startsWith(API_PREFIX);
}

/** A JSON error answer, `{"error": message}`, never cached. */
export function apiError(status: number, message: string, headers: HeadersInit = {}): Response {
  const body = new TextEncoder().encode(JSON.stringify({ error: message }));
  const h = new Headers(headers);
  h.set("content-type", "application/json");
  h.set("cache-control", "no-store");
  h.set("content-length", String(body.length));
  return new Response(body, { status, headers: h });
}

/** 404 for a path under the prefix that no API route declares. */
export function apiNotFound(): Response {
  return apiError(404, "not found");
}

/** 405 with the methods the API path does answer. */
export function apiMethodNotAllowed(allow: readonly string[]): Response {
  return apiError(405, "method not allowed", { allow: allow.join(", ") });
}

/** Generic 500: the details go to logs and monitoring, never to the client. */
export function apiInternalError(): Response {
  return apiError(500, "internal error");
}
