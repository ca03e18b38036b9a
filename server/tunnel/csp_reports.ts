/** `POST {TUNNEL_PATH}/csp`: the browser's CSP violation reports through the app's own origin, as
 * envelopes through the tunnel (past ad blockers); checked, then sent to the security endpoint. */
import { ApiError, createJsonReader } from "../api/json_body.ts";
import type { BodyBudget } from "../http/body_budget.ts";
import { clientAddress, type TrustProxy } from "../http/client_address.ts";
import type { Bytes } from "../http/request_body.ts";
import { clientKey, createRateLimiter } from "../rate_limit.ts";
import { rateLimited, upstreamHeaders } from "./policy.ts";

/** A report is about 1 KB; Chromium's Reporting API sends a page's reports as one array. */
export const CSP_REPORT_MAX_BYTES = 64 * 1024;

// `report-uri` posts `{"csp-report": {...}}`, the Reporting API an array of reports.
const types = {
  pattern: /^application\/(csp-report|reports\+json)\s*(;|$)/i,
  name: "application/csp-report or application/reports+json",
};

/** Sends a checked report to `url` (a plain fetch, or the delivery queue). */
export type Forward = (
  url: string,
  body: Bytes,
  headers: Record<string, string>,
) => Promise<Response>;

/** Build the handler: `target` is the security endpoint, `rateLimit` TUNNEL_RATE_LIMIT's reports
 * per client per minute (a bucket of their own, so reports never spend the envelopes' budget). */
export function createCspReportHandler(
  options: {
    target: string;
    trustProxy: TrustProxy;
    rateLimit: number;
    bodies: BodyBudget;
    forward: Forward;
  },
) {
  const limiter = options.rateLimit > 0 && createRateLimiter({ limit: options.rateLimit });
  const maxBodyBytes = CSP_REPORT_MAX_BYTES;
  const readJson = createJsonReader({ maxBodyBytes, bodies: options.bodies, types });
  const answer = (status: number, reason: string, headers?: Readonly<Record<string, string>>) =>
    new Response(`${reason}\n`, { status, headers: { ...headers, "content-type": "text/plain" } });
  return async (req: Request, info: Deno.ServeHandlerInfo): Promise<Response> => {
    const ip = clientAddress(req, info, options.trustProxy);
    const limit = limiter && ip !== "" && limiter.take(clientKey(ip), performance.now());
    const refusal = limit && !limit.allowed ? rateLimited(limit.retryAfterSeconds) : undefined;
    if (refusal) return answer(refusal.status, refusal.reason, refusal.headers);
    const report = await readJson(req, clientKey(ip)).catch((error) => error);
    if (report instanceof ApiError) return answer(report.status, report.message, report.headers);
    if (report instanceof Error) throw report;
    const type = types.pattern.exec(req.headers.get("content-type")!)![1].toLowerCase();
    const shaped = type === "csp-report"
      ? Object.hasOwn(Object(report), type)
      : Array.isArray(report);
    if (!shaped) return answer(400, `not a CSP report (application/${type})`);
    // As the tunnel's (client address, User-Agent); a Content-Encoding would be the client's lie.
    const headers = { ...upstreamHeaders(req.headers, ip), "content-type": `application/${type}` };
    const body = new TextEncoder().encode(JSON.stringify(report));
    const res = await options.forward(options.target, body, headers).catch(() => undefined);
    await res?.body?.cancel();
    return res?.ok ? new Response(null, { status: 204 }) : answer(502, "ingest did not take it");
  };
}
