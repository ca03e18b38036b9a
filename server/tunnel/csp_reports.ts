/** `POST {TUNNEL_PATH}/csp`: the browser's CSP violation reports through the app's own origin, as
 * envelopes through the tunnel (past ad blockers); checked, then sent to the security endpoint. */
import { ApiError, createJsonReader } from "../api/json_body.ts";
import type { BodyBudget } from "../http/body_budget.ts";
import { clientAddress, type TrustProxy } from "../http/client_address.ts";
import type { DeliveryQueue } from "../delivery/queue.ts";
import { clientKey, createRateLimiter } from "../rate_limit.ts";
import { rateLimited, upstreamHeaders } from "./policy.ts";
import type { DsnBudget } from "./handler.ts";

/** A report is about 1 KB; Chromium's Reporting API sends a page's reports as one array. */
export const CSP_REPORT_MAX_BYTES = 64 * 1024;

// `report-uri` posts `{"csp-report": {...}}`, the Reporting API an array of reports.
const types = {
  pattern: /^application\/(csp-report|reports\+json)\s*(;|$)/i,
  name: "application/csp-report or application/reports+json",
};

/** Build the handler: `target` is the security endpoint, `rateLimit` reports per client per minute
 * (apart from a client's envelopes), `dsnBudget` the tunnel's overall one (shared). */
export function createCspReportHandler(
  options: {
    target: string;
    trustProxy: TrustProxy;
    rateLimit: number;
    bodies: BodyBudget;
    /** The app's own DSN's public key: its rate limits are the reports' too. */
    key: string;
    delivery: Pick<DeliveryQueue, "enqueue">;
    dsnBudget?: DsnBudget;
  },
) {
  const limiter = options.rateLimit > 0 && createRateLimiter({ limit: options.rateLimit });
  const maxBodyBytes = CSP_REPORT_MAX_BYTES;
  const readJson = createJsonReader({ maxBodyBytes, bodies: options.bodies, types });
  const answer = (status: number, reason: string, headers?: Readonly<Record<string, string>>) =>
    new Response(`${reason}\n`, { status, headers: { ...headers, "content-type": "text/plain" } });
  return async (req: Request, info: Deno.ServeHandlerInfo): Promise<Response> => {
    const ip = clientAddress(req, info, options.trustProxy), client = clientKey(ip);
    const limit = limiter && ip !== "" && limiter.take(client, performance.now());
    const refusal = limit && !limit.allowed ? rateLimited(limit.retryAfterSeconds) : undefined;
    if (refusal) return answer(refusal.status, refusal.reason, refusal.headers);
    const report = await readJson(req, client).catch((error) => error);
    if (report instanceof ApiError) return answer(report.status, report.message, report.headers);
    if (report instanceof Error) throw report;
    const type = types.pattern.exec(req.headers.get("content-type")!)![1].toLowerCase();
    const shaped = type === "csp-report"
      ? Object.hasOwn(Object(report), type)
      : Array.isArray(report);
    if (!shaped) return answer(400, `not a CSP report (application/${type})`);
    // As the tunnel's (client address, User-Agent), but the body is re-serialized: never encoded.
    const { "content-encoding": _, ...passed } = upstreamHeaders(req.headers, ip);
    const headers = { ...passed, "content-type": `application/${type}` };
    const body = new TextEncoder().encode(JSON.stringify(report));
    const { target: url, key, delivery } = options;
    // The item type of Sentry's "security" category: its rate limit holds reports.
    const queued = options.dsnBudget?.(key) ??
      delivery.enqueue({ url, body, headers, key, itemTypes: ["raw_security"] });
    return "reason" in queued
      ? answer(queued.status, queued.reason, queued.headers)
      : new Response(null, { status: 204 });
  };
}
