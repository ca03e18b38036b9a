/**
 * API routes: `(req) => Response` handlers for exact paths under `/api/`, declared in
 * `server/api/routes.ts`. They run inside the app's handler chain (limits, security headers,
 * request log, tracing, error reporting); what this module adds is their JSON error answers.
 */
import type { Handler } from "../http/handler.ts";

/** Every API path starts with this; an unknown path under it gets a JSON 404, not the page. */
export const API_PREFIX = "/api/";

/** The HTTP methods an API route can answer. */
export type ApiMethod = "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE";

/** API handlers by exact path, then by method. Keys are written by developers, never clients. */
export type ApiRoutes = Readonly<Record<string, Readonly<Partial<Record<ApiMethod, Handler>>>>>;

/**
 * Check the declared API routes and list them as `[path, handlers by method]`. Throws on a path
 * outside {@link API_PREFIX} or with a query, so a typo stops start-up.
 *
 * @example
 * for (const [path, methods] of apiRouteEntries({ "/api/hello": { GET: hello } })) ...
 */
export function apiRouteEntries(
  routes: ApiRoutes,
): [path: string, methods: Record<string, Handler>][] {
  return Object.entries(routes).map(([path, methods]) => {
    if (!path.startsWith(API_PREFIX) || /[?#\s]/.test(path)) {
      throw new Error(`API path ${JSON.stringify(path)}: must start with ${API_PREFIX}`);
    }
    const handlers: Record<string, Handler> = {};
    for (const [method, handler] of Object.entries(methods)) {
      if (handler !== undefined) handlers[method] = handler;
    }
    if (Object.keys(handlers).length === 0) throw new Error(`API path ${path}: no method`);
    return [path, handlers];
  });
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
