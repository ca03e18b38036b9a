/** API routes (routes.ts): their context (request id, address, bounded JSON body), JSON errors. */
import { answerOrElse, answerText } from "../http/error_pages.ts";
import type { ContextHandler } from "../http/request_context.ts";
import { clientAddress, type TrustProxy } from "../http/client_address.ts";
import { clientKey } from "../rate_limit.ts";
import { ApiError, createJsonReader, type JsonBodyOptions } from "./json_body.ts";

export { ApiError } from "./json_body.ts";

/** Every API path starts with this; an unknown path under it gets a JSON 404, not the page. */
export const API_PREFIX = "/api/";

/** The HTTP methods an API route can answer. */
export type ApiMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

/** What an API handler gets besides the request. */
export interface ApiContext {
  readonly requestId: string;
  /** The client's address: the socket's, or with TRUST_PROXY from X-Forwarded-For. */
  readonly clientAddress: string;
  /** The body as JSON, within limits; a client's mistake is answered, never a 500: 415 unless
   * declared `application/json` (or `…+json`), 413 over the size limit, 400 empty, malformed or
   * nested deeper than 64, 408 not received in time, 503 when too many bodies are in flight. */
  json<T = unknown>(): Promise<T>;
}

/** An API route's handler. */
export type ApiHandler = (req: Request, ctx: ApiContext) => Response | Promise<Response>;

/** API handlers by exact path, then by method. Keys are written by developers, never clients. */
export type ApiRoutes = Readonly<Record<string, Readonly<Partial<Record<ApiMethod, ApiHandler>>>>>;

/** Check the API routes and list them as `[path, handlers by method]`, GET also answering HEAD;
 * a path outside {@link API_PREFIX} or with a query throws, so a typo stops start-up. */
export function apiRouteEntries(
  routes: ApiRoutes,
  options: JsonBodyOptions & { readonly trustProxy: TrustProxy },
): [path: string, methods: Record<string, ContextHandler>][] {
  // One budget of bodies in flight for all routes.
  const readJson = createJsonReader(options);
  return Object.entries(routes).map(([path, methods]) => {
    if (!path.startsWith(API_PREFIX) || /[?#\s]/.test(path)) {
      throw new Error(`API path ${JSON.stringify(path)}: must start with ${API_PREFIX}`);
    }
    const handlers: Record<string, ContextHandler> = {};
    for (const [method, handler] of Object.entries(methods)) {
      if (handler === undefined) continue;
      handlers[method] = (req, info, ctx) => {
        const address = clientAddress(req, info, options.trustProxy);
        const json = <T>() => readJson(req, clientKey(address)) as Promise<T>;
        const api: ApiContext = { requestId: ctx.requestId, clientAddress: address, json };
        return answerOrElse(() => handler(req, api), refusal);
      };
    }
    // Deno sends a HEAD answer without its body.
    if (handlers.GET !== undefined) handlers.HEAD ??= handlers.GET;
    if (Object.keys(handlers).length === 0) throw new Error(`API path ${path}: no method`);
    return [path, handlers];
  });
}

// An ApiError becomes its answer; anything else is the app's fault, for the app to report.
function refusal(error: unknown): Response {
  if (error instanceof ApiError) return apiError(error.status, error.message, error.headers);
  throw error;
}

/** Whether a request path belongs to the API (and so gets JSON errors). */
export function isApiPath(path: string): boolean {
  return path.startsWith(API_PREFIX);
}

/** A JSON error answer, `{"error": message}`, never cached. */
export function apiError(status: number, message: string, headers: HeadersInit = {}): Response {
  return answerText(status, "application/json", JSON.stringify({ error: message }), headers);
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
