/**
 * The fuzz campaign's oracle: given a hostile request and what the server did with it, the
 * failure it shows (one short class name, the same for every case with the same fault), or
 * null when the answer is acceptable.
 *
 * @example
 * const failure = judgeExchange(request, await exchangeRaw(port, pieces, 2_000));
 * if (failure) throw new Error(failure.class);
 */
import type { RawOutcome } from "./raw_exchange.ts";
import { METHODS, PROTOTYPE_NAMES, type RawRequest } from "./raw_request.ts";

/** A broken expectation. */
export interface Failure {
  /** What went wrong, without the request's context: `500 from the runtime`. */
  readonly kind: string;
  /** `kind` with the route and the request's signature, for a failure message. */
  readonly class: string;
  readonly detail: string;
}

/** Where a request is headed, by the path of its target; `other` for anything else. */
export type RouteKind = "/" | "/healthz" | "/monitoring" | "static" | "other";

const PAGE_METHODS = new Set(["GET", "HEAD"]);
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Judge one exchange. Acceptable: any 1xx-4xx the request deserved, a 4xx from the HTTP parser
 * (no `x-request-id`: the app never saw it), or the connection closed on a malformed request.
 * Not acceptable: a 5xx, no answer in time, an app 4xx without a reason, a 2xx for a method or
 * path the app does not serve, or an answer from a route other than the target's.
 */
export function judgeExchange(
  request: RawRequest,
  outcome: RawOutcome,
  staticPaths: ReadonlySet<string>,
): Failure | null {
  const route = routeOf(request.target, staticPaths);
  // Where and with what kind of request: the survey keeps classes with different triggers apart.
  const on = `${route}; ${requestSignature(request)}`;
  if (outcome.kind === "timeout") {
    return failure("hang: no answer in time", on, `${outcome.received} bytes back`);
  }
  if (outcome.kind === "closed") {
    return isWellFormed(request)
      ? failure("closed without answer to a well-formed request", on, "")
      : null;
  }
  const { status, headers } = outcome;
  const from = headers.has("x-request-id") ? "app" : "runtime";
  const detail = `method ${JSON.stringify(request.method.slice(0, 30))}`;
  if (status >= 500) {
    return failure(`${status} from the ${from}`, on, detail);
  }
  if (status >= 400 && from === "app" && !outcome.hasBody && request.method !== "HEAD") {
    return failure(`${status} without a reason`, on, detail);
  }
  if (status >= 200 && status < 300) {
    const answered = routeAnswering(headers.get("content-type") ?? "");
    const allowed = route === "/monitoring"
      ? request.method === "POST"
      : PAGE_METHODS.has(request.method);
    if (!allowed) {
      return failure(`${status} for a method the route does not serve`, on, detail);
    }
    // The fuzz names no allowed DSN, so a 2xx here is an envelope forwarded.
    if (route === "/monitoring") {
      return failure(`${status} from the tunnel: it forwarded an envelope`, on, detail);
    }
    if (answered !== route && !(answered === "static" && route === "other")) {
      return failure(`${status} from ${answered} for a request to ${route}`, on, detail);
    }
  }
  return null;
}

function failure(kind: string, on: string, detail: string): Failure {
  return { kind, class: `${kind} (${on})`, detail };
}

/**
 * The request's kind in two words: its method (a standard one, an Object.prototype name, another
 * token, not a token) and where its authority comes from (a valid Host, a malformed one, none,
 * two, or an absolute-form target).
 */
export function requestSignature(request: RawRequest): string {
  const method = METHODS.includes(request.method)
    ? "standard method"
    : PROTOTYPE_NAMES.includes(request.method)
    ? "Object.prototype method"
    : TOKEN.test(request.method)
    ? "other token method"
    : "non-token method";
  const hosts = request.headers.filter(([name]) => name.toLowerCase() === "host");
  const host = !request.target.startsWith("/")
    ? "non-origin target"
    : hosts.length === 0
    ? "no Host"
    : hosts.length > 1
    ? "two Hosts"
    : isValidHost(hosts[0][1])
    ? "valid Host"
    : "malformed Host";
  return `${method}, ${host}`;
}

/**
 * The route the target's path names, as a correct server would resolve it: origin-form paths
 * resolved the way `new URL` does against a well-formed authority, absolute-form (any scheme)
 * by its path.
 */
export function routeOf(target: string, staticPaths: ReadonlySet<string>): RouteKind {
  let pathname: string;
  try {
    pathname = target.startsWith("/")
      ? new URL(`http://127.0.0.1${target}`).pathname
      : /^[a-z][a-z0-9+.-]*:\/\//i.test(target)
      ? new URL(target).pathname
      : "";
  } catch {
    return "other";
  }
  if (pathname === "/" || pathname === "/healthz" || pathname === "/monitoring") return pathname;
  return staticPaths.has(pathname) ? "static" : "other";
}

/** Which route produced a 2xx, told by its Content-Type (each route has its own). */
function routeAnswering(contentType: string): RouteKind {
  if (contentType.startsWith("text/html")) return "/";
  if (contentType.startsWith("application/json")) return "/healthz";
  // Only the tunnel relays the ingest's answer; the fuzz never names an allowed DSN.
  if (contentType === "") return "other";
  return "static";
}

/**
 * A request any HTTP/1.1 server must answer (not just drop): a token method, an origin-form
 * target of plain characters, HTTP/1.x, one valid Host, plain header values and honest framing.
 */
export function isWellFormed(request: RawRequest): boolean {
  if (!TOKEN.test(request.method) || request.method === "CONNECT") {
    return false;
  }
  if (!/^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$/.test(request.target)) {
    return false;
  }
  if (request.target.length > 8_000) return false;
  if (request.version !== "HTTP/1.1" && request.version !== "HTTP/1.0") return false;
  const hosts = request.headers.filter(([name]) => name.toLowerCase() === "host");
  if (hosts.length !== 1 || !isValidHost(hosts[0][1])) return false;
  let size = 0;
  const framing: string[] = [];
  for (const [name, value] of request.headers) {
    if (
      !TOKEN.test(name) ||
      !/^[\x21-\x7e]([\x20-\x7e]*[\x21-\x7e])?$|^$/.test(value)
    ) {
      return false;
    }
    size += name.length + value.length + 4;
    const lower = name.toLowerCase();
    if (
      ["content-length", "transfer-encoding", "expect", "connection", "upgrade", "te", "trailer"]
        .includes(lower)
    ) {
      framing.push(`${lower}: ${value}`);
    }
  }
  if (size > 16_000 || request.headers.length > 50) return false;
  if (framing.length === 0) return request.body === "";
  return framing.length === 1 && framing[0] === `content-length: ${request.body.length}`;
}

function isValidHost(host: string): boolean {
  const match = /^(?:[A-Za-z0-9\-._~]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?$/.exec(host);
  return match !== null && (match[1] === undefined || Number(match[1]) <= 65535);
}
