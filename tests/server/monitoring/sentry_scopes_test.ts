/**
 * Server monitoring as a Sentry user relies on it, over real sockets against a fake ingest: app
 * code calling `@sentry/deno` in its handlers, many requests at once. In-process, since app code
 * and the server share the SDK; each test calls `Sentry.init` anew (startMonitoring).
 */
import assert from "node:assert/strict";
import * as Sentry from "@sentry/deno";
import type { Event } from "@sentry/core";
import { type FakeIngest, startFakeIngest } from "../../support/fake_ingest.ts";
import { startMonitoredApp } from "../../support/monitored_app.ts";

// The SDK's client is process-wide: its flush leaves a timer of its own (@sentry/core's promise
// buffer) running for the timeout, and its keep-alive connection to the ingest outlives a test.
function test(name: string, fn: () => Promise<void>) {
  Deno.test({ name, fn, sanitizeOps: false, sanitizeResources: false });
}

async function items(ingest: FakeIngest, type: string): Promise<Event[]> {
  const found: Event[] = [];
  for (const [, list] of await ingest.envelopes()) {
    for (const [header, payload] of list) if (header.type === type) found.push(payload as Event);
  }
  return found;
}

async function get(url: string, headers: HeadersInit = {}): Promise<Response> {
  const res = await fetch(url, { headers });
  await res.body?.cancel();
  return res;
}

test("40 concurrent requests: each error carries only its own tag and user; a later request none", async () => {
  await using ingest = startFakeIngest();
  await using app = startMonitoredApp(ingest, {
    "/api/who": {
      GET: async (req) => {
        const n = new URL(req.url).searchParams.get("n");
        if (n !== null) {
          Sentry.setTag("n", n);
          Sentry.setUser({ id: `user-${n}` });
          Sentry.setContext("order", { n });
        }
        // Let the other requests interleave between setting and capturing.
        await new Promise((resolve) => setTimeout(resolve, 10));
        Sentry.captureException(new Error(`error ${n ?? "none"}`));
        return Response.json({ ok: true });
      },
    },
  }, { SENTRY_TRACES_SAMPLE_RATE: "0" });
  await Promise.all(
    Array.from({ length: 40 }, (_, n) => get(`${app.url}/api/who?n=${n}`)),
  );
  await get(`${app.url}/api/who`);
  await app.stop();
  const events = await items(ingest, "event");
  assert.equal(events.length, 41);
  for (const event of events) {
    const n = /^error (\d+|none)$/.exec(event.exception?.values?.[0]?.value ?? "")?.[1];
    assert.ok(n !== undefined);
    if (n === "none") {
      assert.equal(event.tags?.n, undefined, "a request that set nothing carries nothing");
      assert.equal(event.user, undefined);
      assert.equal(event.contexts?.order, undefined);
    } else {
      assert.equal(event.tags?.n, n);
      assert.deepEqual(event.user, { id: `user-${n}` });
      assert.deepEqual(event.contexts?.order, { n });
    }
  }
});

test("10 concurrent requests each with a child span: 10 transactions, each with its own child", async () => {
  await using ingest = startFakeIngest();
  await using app = startMonitoredApp(ingest, {
    "/api/work": {
      GET: (req) => {
        const n = new URL(req.url).searchParams.get("n");
        return Sentry.startSpan({ name: `work ${n}`, op: "function" }, async () => {
          await new Promise((resolve) => setTimeout(resolve, 10));
          return Response.json({ n });
        });
      },
    },
  });
  await Promise.all(Array.from({ length: 10 }, (_, n) => get(`${app.url}/api/work?n=${n}`)));
  await app.stop();
  const transactions = await items(ingest, "transaction");
  assert.equal(transactions.length, 10, "no stray root transactions");
  const seen = new Set<string>();
  for (const t of transactions) {
    assert.equal(t.transaction, "GET /api/work");
    const trace = t.contexts?.trace;
    assert.equal(t.spans?.length, 1, JSON.stringify(t.spans));
    const [child] = t.spans!;
    assert.equal(child.parent_span_id, trace?.span_id, "the child's parent is the request span");
    assert.equal(child.trace_id, trace?.trace_id);
    assert.match(child.description ?? "", /^work \d$/);
    seen.add(child.description!);
    // What the SDK's Deno contexts and the request give every transaction.
    assert.equal(t.contexts?.runtime?.name, "deno");
    assert.ok(t.contexts?.os?.name);
    assert.equal(trace?.data?.["http.request.method"], "GET");
    assert.equal(trace?.data?.["http.response.status_code"], 200);
    assert.equal(trace?.data?.["url.full"], `${app.url}/api/work`, "no query string");
    assert.equal(trace?.data?.["server.address"], "127.0.0.1");
  }
  assert.equal(seen.size, 10, "each request its own child");
  assert.equal(new Set(transactions.map((t) => t.contexts?.trace?.trace_id)).size, 10);
});

test("an error in a handler carries the request's trace and URL; getTraceData continues the trace", async () => {
  await using ingest = startFakeIngest();
  await using app = startMonitoredApp(ingest, {
    "/api/trace": {
      GET: () => {
        Sentry.captureException(new Error("captured in a handler"));
        return Response.json(Sentry.getTraceData());
      },
    },
  }, { SENTRY_TRACES_SAMPLE_RATE: "0" });
  const incoming = "0123456789abcdef0123456789abcdef";
  const continued = await fetch(`${app.url}/api/trace?secret=1`, {
    headers: { "sentry-trace": `${incoming}-0123456789abcdef-0` },
  }).then((r) => r.json());
  assert.match(continued["sentry-trace"], new RegExp(`^${incoming}-[0-9a-f]{16}-0$`));
  const fresh = await Promise.all(
    [1, 2].map(() => fetch(`${app.url}/api/trace`).then((r) => r.json())),
  );
  const freshIds = fresh.map((d) => d["sentry-trace"].slice(0, 32));
  assert.notEqual(freshIds[0], freshIds[1], "two fresh requests, two traces");
  assert.ok(!freshIds.includes(incoming));
  await app.stop();
  const events = await items(ingest, "event");
  assert.equal(events.length, 3);
  const first = events.find((e) => e.contexts?.trace?.trace_id === incoming);
  assert.ok(first, "the continued request's error is in its trace");
  assert.equal(first.request?.url, `${app.url}/api/trace`, "its URL, without the query");
  assert.equal(first.request?.method, "GET");
  assert.equal(first.request?.headers?.cookie, undefined);
  assert.deepEqual(
    new Set(events.map((e) => e.contexts?.trace?.trace_id)),
    new Set([incoming, ...freshIds]),
  );
});

test("at rate 0.1 no envelope claims sampled=true with sample_rand >= sample_rate unless its parent decided", async () => {
  await using ingest = startFakeIngest();
  await using app = startMonitoredApp(ingest, { "/api/x": { GET: () => new Response("x") } }, {
    SENTRY_TRACES_SAMPLE_RATE: "0.1",
  });
  // 100 fresh requests, and 10 that continue a browser's trace with its sampling context.
  await Promise.all(Array.from({ length: 100 }, () => get(`${app.url}/api/x`)));
  const heads = Array.from({ length: 10 }, (_, i) => ({
    trace: `${i.toString(16).padStart(2, "0")}${"b".repeat(30)}`,
    rand: (0.05 + i * 0.09).toFixed(2),
  }));
  for (const { trace, rand } of heads) {
    await get(`${app.url}/api/x`, {
      "sentry-trace": `${trace}-0123456789abcdef-${Number(rand) < 0.5 ? 1 : 0}`,
      baggage: `sentry-trace_id=${trace},sentry-environment=browser-env,sentry-sample_rate=0.5,` +
        `sentry-sample_rand=${rand},sentry-sampled=${Number(rand) < 0.5},sentry-public_key=key`,
    });
  }
  await app.stop();
  const envelopes = (await ingest.envelopes()).filter(([, list]) =>
    list[0][0].type === "transaction"
  );
  assert.ok(envelopes.length > 5, `${envelopes.length} transactions`);
  for (const [header] of envelopes) {
    const trace = header.trace as Record<string, string>;
    const head = heads.find((h) => h.trace === trace.trace_id);
    if (head) {
      // The browser's context, passed on unchanged.
      assert.equal(trace.sample_rand, head.rand);
      assert.equal(trace.environment, "browser-env");
      assert.equal(trace.sample_rate, "0.5");
      assert.equal(trace.sampled, "true");
    } else {
      assert.equal(trace.environment, "server-env");
      assert.equal(trace.sampled, "true");
      assert.ok(Number(trace.sample_rand) < Number(trace.sample_rate), JSON.stringify(trace));
    }
  }
  // Exactly the heads that decided "sampled" were continued as sampled.
  const continued = envelopes.map(([h]) => (h.trace as Record<string, string>).trace_id)
    .filter((id) => heads.some((h) => h.trace === id));
  assert.deepEqual(continued.sort(), heads.filter((h) => Number(h.rand) < 0.5).map((h) => h.trace));
});

test("the app's beforeSendTransaction and ignoreTransactions take effect", async () => {
  await using ingest = startFakeIngest();
  await using app = startMonitoredApp(
    ingest,
    {
      "/api/kept": { GET: () => new Response("kept") },
      "/api/ping": { GET: () => new Response("pong") },
    },
    {},
    {
      sentryOptions: {
        ignoreTransactions: ["GET /api/ping"],
        beforeSendTransaction: (event) => ({ ...event, tags: { ...event.tags, team: "checkout" } }),
      },
    },
  );
  await get(`${app.url}/api/kept`);
  await get(`${app.url}/api/ping`);
  await app.stop();
  const transactions = await items(ingest, "transaction");
  assert.deepEqual(transactions.map((t) => t.transaction), ["GET /api/kept"]);
  assert.equal(transactions[0].tags?.team, "checkout");
});

test("under load at rate 1, the ingest slow to answer: the error and every transaction arrive", async () => {
  // The ingest holds every answer until all the requests are made: the SDK's own buffer (64) would
  // fill; the delivery queue takes each envelope at once and holds it instead.
  const answers = Promise.withResolvers<void>();
  await using ingest = startFakeIngest({ hold: answers.promise });
  await using app = startMonitoredApp(ingest, {
    "/api/x": { GET: () => new Response("x") },
    "/api/fail": {
      GET: () => {
        Sentry.captureException(new Error("during the load"));
        return new Response("failed");
      },
    },
  });
  await Promise.all(Array.from({ length: 150 }, () => get(`${app.url}/api/x`)));
  await get(`${app.url}/api/fail`);
  answers.resolve();
  await app.stop();
  assert.equal((await items(ingest, "event")).length, 1);
  assert.equal((await items(ingest, "transaction")).length, 151, "no transaction dropped");
  const reports = await items(ingest, "client_report");
  assert.deepEqual(reports, [], "nothing was dropped, so nothing reported");
});
