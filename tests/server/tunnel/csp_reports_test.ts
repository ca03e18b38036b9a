import assert from "node:assert/strict";
import {
  createCspReportHandler,
  CSP_REPORT_MAX_BYTES,
} from "../../../server/tunnel/csp_reports.ts";
import {
  createDeliveryQueue,
  type Decision,
  type DeliveryQueue,
  type Outgoing,
} from "../../../server/delivery/queue.ts";
import { parseDsn } from "../../../server/dsn.ts";
import { categoriesOf } from "../../../server/delivery/outcome.ts";
import { createDsnBudget, type DsnBudget } from "../../../server/tunnel/handler.ts";
import { defaultBodies } from "../../support/tunnel_upload.ts";

const TARGET = "https://ingest.example/api/1/security/?sentry_key=k";
const REPORT = { "csp-report": { "violated-directive": "img-src", "blocked-uri": "https://x" } };

/** The handler on a real socket, with a forward that records what it was given. */
function serve(
  options: {
    rateLimit?: number;
    answer?: () => Decision;
    dsnBudget?: DsnBudget;
    delivery?: Pick<DeliveryQueue, "enqueue">;
  } = {},
) {
  const forwarded: (Omit<Outgoing, "body"> & { body: unknown })[] = [];
  const delivery = {
    enqueue: (e: Outgoing): Decision => {
      forwarded.push({ ...e, body: JSON.parse(new TextDecoder().decode(e.body)) });
      return options.answer?.() ?? { status: 200 };
    },
  };
  const handler = createCspReportHandler({
    target: TARGET,
    trustProxy: false,
    rateLimit: options.rateLimit ?? 0,
    bodies: defaultBodies(),
    key: "k",
    delivery: options.delivery ?? delivery,
    dsnBudget: options.dsnBudget,
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const post = async (body: BodyInit, type: string) => {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/monitoring/csp`, {
      method: "POST",
      body,
      headers: { "content-type": type },
    });
    return { status: res.status, text: await res.text(), headers: res.headers };
  };
  const url = `http://127.0.0.1:${server.addr.port}/`;
  return { forwarded, post, url, [Symbol.asyncDispose]: () => server.shutdown() };
}

Deno.test("CSP reports: both content types are forwarded to the security endpoint, re-serialized", async () => {
  await using s = serve();
  assert.equal((await s.post(JSON.stringify(REPORT), "application/csp-report")).status, 204);
  const batch = [{ type: "csp-violation", body: { effectiveDirective: "img-src" } }];
  const reports = await s.post(JSON.stringify(batch), "application/reports+json; charset=utf-8");
  assert.equal(reports.status, 204);
  assert.deepEqual(s.forwarded.map((f) => [f.url, f.body, f.headers["content-type"]]), [
    [TARGET, REPORT, "application/csp-report"],
    [TARGET, batch, "application/reports+json"],
  ]);
  assert.equal(s.forwarded[0].headers["x-sentry-forwarded-for"], "127.0.0.1");
  // Sentry's "security" category: an ingest's limit on it alone holds reports back.
  for (const { itemTypes } of s.forwarded) assert.deepEqual(categoriesOf(itemTypes), ["security"]);
});

Deno.test("CSP reports: the DSN's overall budget (the tunnel's) answers 429, nothing queued", async () => {
  const budget = createDsnBudget(2, () => 0);
  assert.equal(budget("k"), undefined, "an envelope of the tunnel spends one");
  await using s = serve({ dsnBudget: budget });
  assert.equal((await s.post(JSON.stringify(REPORT), "application/csp-report")).status, 204);
  const res = await s.post(JSON.stringify(REPORT), "application/csp-report");
  assert.equal(res.status, 429);
  assert.match(res.text, /too many envelopes for this DSN/);
  assert.match(res.headers.get("retry-after") ?? "", /^[1-9]\d*$/);
  assert.equal(s.forwarded.length, 1);
});

Deno.test("CSP reports: bad input is a 4xx with a one-line reason, and nothing is forwarded", async () => {
  await using s = serve();
  const cases: [BodyInit, string, number, RegExp][] = [
    [JSON.stringify(REPORT), "application/json", 415, /application\/csp-report/],
    [JSON.stringify(REPORT), "text/plain", 415, /content-type/],
    ["{not json", "application/csp-report", 400, /malformed JSON/],
    ["", "application/csp-report", 400, /empty body/],
    [JSON.stringify({ other: 1 }), "application/csp-report", 400, /not a CSP report/],
    [JSON.stringify(REPORT), "application/reports+json", 400, /not a CSP report/],
    ["[" + "1,".repeat(CSP_REPORT_MAX_BYTES) + "1]", "application/reports+json", 413, /larger/],
  ];
  for (const [body, type, status, reason] of cases) {
    const res = await s.post(body, type);
    assert.equal(res.status, status, `${type} ${String(body).slice(0, 20)}`);
    assert.match(res.text, reason);
    assert.equal(res.text.trimEnd().split("\n").length, 1);
  }
  assert.equal(s.forwarded.length, 0);
});

Deno.test("CSP reports: the per-client rate limit answers 429 with Retry-After", async () => {
  await using s = serve({ rateLimit: 2 });
  const statuses = [];
  let last: Headers | undefined;
  for (let i = 0; i < 3; i++) {
    const res = await s.post(JSON.stringify(REPORT), "application/csp-report");
    statuses.push(res.status);
    last = res.headers;
  }
  assert.deepEqual(statuses, [204, 204, 429]);
  assert.match(last?.get("retry-after") ?? "", /^\d+$/);
  assert.equal(s.forwarded.length, 2);
});

Deno.test("CSP reports: the queue's refusal (rate limited, full) is the browser's answer", async () => {
  const headers = { "retry-after": "30", "x-sentry-rate-limits": "30::organization" };
  {
    await using s = serve({ answer: () => ({ status: 429, reason: "rate limited", headers }) });
    const res = await s.post(JSON.stringify(REPORT), "application/csp-report");
    assert.deepEqual([res.status, res.text, res.headers.get("retry-after")], [
      429,
      "rate limited\n",
      "30",
    ]);
    assert.equal(s.forwarded[0].key, "k");
  }
  const full = { "retry-after": "5" };
  await using s = serve({ answer: () => ({ status: 503, reason: "queue full", headers: full }) });
  assert.equal((await s.post(JSON.stringify(REPORT), "application/csp-report")).status, 503);
});

Deno.test("CSP reports: an ingest's limit on the security category alone holds them back", async () => {
  let sent = 0;
  const ingest: typeof fetch = async (_url, init) => {
    sent++;
    await new Response(init?.body).arrayBuffer();
    const headers = { "x-sentry-rate-limits": "60:security:key" };
    return new Response(null, { status: 429, headers });
  };
  const dsns = [parseDsn("https://k@ingest.example/1")!];
  const delivery = createDeliveryQueue({
    dsns,
    maxBytes: 1 << 20,
    maxAgeMs: 60_000,
    fetch: ingest,
  });
  try {
    await using s = serve({ delivery });
    assert.equal((await s.post(JSON.stringify(REPORT), "application/csp-report")).status, 204);
    assert.ok(await delivery.flush(5_000));
    const held = await s.post(JSON.stringify(REPORT), "application/csp-report");
    assert.equal(held.status, 429);
    assert.match(held.headers.get("x-sentry-rate-limits") ?? "", /^(59|60):security:key$/);
    assert.ok(await delivery.flush(5_000));
    assert.equal(sent, 1, "the second report never reached the ingest");
  } finally {
    await delivery.close();
  }
});

Deno.test("CSP reports: a Content-Encoding the client names is not passed on with the re-serialized report", async () => {
  await using s = serve();
  const { port } = new URL(s.url);
  const res = await fetch(`http://127.0.0.1:${port}/monitoring/csp`, {
    method: "POST",
    body: JSON.stringify(REPORT),
    headers: { "content-type": "application/csp-report", "content-encoding": "gzip" },
  });
  await res.body?.cancel();
  assert.equal(res.status, 204);
  assert.equal(s.forwarded.length, 1);
  assert.equal(s.forwarded[0].headers["content-encoding"], undefined);
  assert.deepEqual(s.forwarded[0].body, REPORT);
});
