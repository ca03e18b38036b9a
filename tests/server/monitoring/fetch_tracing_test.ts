/**
 * Outgoing requests over real sockets: a loader's `fetch` to backends on 127.0.0.1 (one listed in
 * SENTRY_TRACE_PROPAGATION_TARGETS, one not, one down, and the app's own API), with logs on.
 */
import assert from "node:assert/strict";
import * as Sentry from "@sentry/deno";
import type { Event } from "@sentry/core";
import { fixtureApiRoutes, type FixtureLoaders } from "../../fixtures/routes.tsx";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import { startMonitoredApp } from "../../support/monitored_app.ts";
import { rawRequest } from "../../support/raw_http.ts";

Deno.test("@sentry/deno traces no fetch itself yet, so server/monitoring/fetch_tracing.ts does", () => {
  const names = Sentry.getDefaultIntegrations({}).map((integration) => integration.name);
  assert.deepEqual(
    names.filter((name) => /fetch/i.test(name)),
    [],
    "@sentry/deno's defaults trace fetch now (getsentry/sentry-javascript#23891): delete " +
      "server/monitoring/fetch_tracing.ts and this test, and check that the tests below still pass",
  );
});

function freePort(): number {
  using probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  return probe.addr.port;
}

/** A backend on 127.0.0.1 that records the headers of each request. */
function startBackend() {
  const seen: Headers[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push(req.headers);
    return new Response("ok");
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    seen,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

Deno.test({
  name:
    "a loader's fetch is a child span; trace headers go to listed targets and the app only; logs carry the trace",
  // The SDK's client is process-wide: its flush leaves a timer of its own for the timeout.
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await using ingest = startFakeIngest();
  await using listed = startBackend();
  await using unlisted = startBackend();
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const down = `http://127.0.0.1:${closed.addr.port}`;
  closed.close();
  const loaders: FixtureLoaders = {
    "/data": async (req) => {
      Sentry.logger.info("loading data");
      const statuses = [];
      for (
        const url of [
          `${listed.url}/items?token=secret#frag`,
          // A target's URL inside another URL is not that target.
          `${unlisted.url}/${listed.url}/items`,
          `${down}/gone`,
          new URL("/api/hello", req.url),
        ]
      ) {
        const status = await fetch(url).then((r) => (r.body?.cancel(), r.status), () => "down");
        statuses.push(status);
      }
      return { name: statuses.join(" ") };
    },
  };
  await using app = startMonitoredApp(
    ingest,
    fixtureApiRoutes,
    {
      // The ingest too, so that a traced SDK or tunnel request would show.
      SENTRY_TRACE_PROPAGATION_TARGETS: `${listed.url}, ${ingest.url}/`,
      SENTRY_ENABLE_LOGS: "true",
      // Its own origin is this machine at PORT: a port of its own, known before it listens.
      PORT: String(freePort()),
    },
    {},
    loaders,
  );
  const page = await fetch(`${app.url}/data`);
  assert.match(await page.text(), /Data for <!-- -->200 200 down 200/);
  // Through the tunnel, while the SDK sends too: neither is traced.
  const envelope = `${JSON.stringify({ dsn: ingest.dsn("key", "7") })}\n{"type":"event"}\n{}`;
  const tunnelled = await fetch(`${app.url}/monitoring`, { method: "POST", body: envelope });
  assert.equal(tunnelled.status, 200);
  await tunnelled.body?.cancel();
  await app.stop();

  const items = (await ingest.envelopes())
    .flatMap(([, list]) => list as unknown as [{ type: string }, unknown][]);
  const transactions = items.filter(([h]) => h.type === "transaction").map(([, e]) => e as Event);
  const loaded = transactions.find((t) => t.transaction === "GET /data");
  const traceId = loaded?.contexts?.trace?.trace_id;
  assert.match(traceId ?? "", /^[0-9a-f]{32}$/, "the page's transaction arrived");
  const spans = (loaded?.spans ?? []).filter((s) => s.op === "http.client");
  const spanTo = (url: string) => {
    const span = spans.find((s) => s.description === `GET ${url}`);
    assert.ok(span, `a span for ${url} in ${JSON.stringify(spans.map((s) => s.description))}`);
    assert.equal(span.parent_span_id, loaded?.contexts?.trace?.span_id, "a child of the request");
    return span;
  };

  // Listed: the backend continues the request's trace from this span; no query in the span.
  const toListed = spanTo(`${listed.url}/items`);
  assert.equal(toListed.status, "ok");
  assert.equal(toListed.data?.["http.response.status_code"], 200);
  assert.equal(toListed.data?.["url.full"], `${listed.url}/items`);
  assert.ok(!JSON.stringify(toListed).includes("secret"), JSON.stringify(toListed));
  assert.equal(listed.seen.length, 1);
  assert.equal(listed.seen[0].get("sentry-trace"), `${traceId}-${toListed.span_id}-1`);
  assert.match(listed.seen[0].get("baggage") ?? "", new RegExp(`sentry-trace_id=${traceId}`));

  // Not listed: the span is recorded, the backend learns nothing of the trace.
  assert.equal(spanTo(`${unlisted.url}/${listed.url}/items`).status, "ok");
  assert.equal(unlisted.seen.length, 1);
  assert.equal(unlisted.seen[0].get("sentry-trace"), null);
  assert.equal(unlisted.seen[0].get("baggage"), null);

  // Down: a failed span, and the trace still arrived (above).
  assert.equal(spanTo(`${down}/gone`).status, "internal_error");

  // The app's own origin is a target by default: its API request is the span's child.
  const toSelf = spanTo(`${app.url}/api/hello`);
  const api = transactions.find((t) => t.transaction === "GET /api/hello");
  assert.equal(api?.contexts?.trace?.trace_id, traceId);
  assert.equal(api?.contexts?.trace?.parent_span_id, toSelf.span_id);

  // The logger's line, in the request's trace.
  const logs = items.filter(([h]) => h.type === "log")
    .flatMap(([, payload]) => (payload as { items: { body: string; trace_id: string }[] }).items);
  assert.deepEqual(logs.map((log) => [log.body, log.trace_id]), [["loading data", traceId]]);

  // The SDK's own requests and the tunnel's carry no trace and are no span.
  assert.ok(ingest.requests.length >= 2, "the tunnelled envelope and the SDK's arrived");
  for (const request of ingest.requests) {
    assert.equal(request.headers.get("sentry-trace"), null, request.path);
    assert.equal(request.headers.get("baggage"), null, request.path);
  }
  assert.ok(items.some(([h]) => h.type === "event"), "the tunnelled event arrived");
  const allSpans = transactions.flatMap((t) => t.spans ?? []);
  assert.ok(!allSpans.some((s) => s.description?.includes(ingest.url)), "no span to the ingest");
});

Deno.test({
  name: "logs stay off unless SENTRY_ENABLE_LOGS says otherwise (the SDK's own default is on)",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await using ingest = startFakeIngest();
  const loaders: FixtureLoaders = {
    "/data": () => (Sentry.logger.info("loading data"), { name: "quiet" }),
  };
  await using app = startMonitoredApp(ingest, {}, {}, {}, loaders);
  const page = await fetch(`${app.url}/data`);
  assert.match(await page.text(), /Data for <!-- -->quiet/);
  await app.stop();
  const types = (await ingest.envelopes()).flatMap(([, list]) => list.map(([h]) => h.type));
  assert.ok(types.includes("transaction"), types.join());
  assert.ok(!types.includes("log"), types.join());
});

Deno.test({
  name:
    "ALLOWED_HOSTS: another Host is a 421; a traced fetch redirected off its target loses the trace headers",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await using ingest = startFakeIngest();
  await using elsewhere = startBackend();
  // The target answers 302 to a host outside the targets (POST 307 keeps its body and method).
  const seen: [string, Headers, string][] = [];
  const target = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    seen.push([new URL(req.url).pathname, req.headers, await req.text()]);
    const status = req.method === "POST" ? 307 : 302;
    const path = new URL(req.url).pathname;
    const location = path === "/hop"
      ? "/away"
      : path === "/to-data"
      ? "data:text/plain,hi"
      : `${elsewhere.url}/landed`;
    return new Response(null, { status, headers: { location } });
  });
  const targetUrl = `http://127.0.0.1:${target.addr.port}`;
  const loaders: FixtureLoaders = {
    "/data": async () => {
      const got = await fetch(`${targetUrl}/hop`, { headers: { authorization: "Bearer t" } });
      const posted = await fetch(`${targetUrl}/away`, { method: "POST", body: "payload" });
      // The same target spelled otherwise is followed by hand too; a redirect off http(s) fails.
      const upper = await fetch(`${targetUrl.replace("http:", "HTTP:")}/hop`);
      const toData = await fetch(`${targetUrl}/to-data`).then((r) => r.status, (e) => e.name);
      const name = `${got.status} ${await got.text()} ${posted.status} ${got.url}`;
      return { name: `${name} ${upper.status} ${await upper.text()} ${toData}` };
    },
  };
  try {
    await using app = startMonitoredApp(
      ingest,
      {},
      {
        SENTRY_TRACE_PROPAGATION_TARGETS: `${targetUrl}/`,
        ALLOWED_HOSTS: "app.example",
      },
      {},
      loaders,
    );
    const evil = await rawRequest(app.url, {
      method: "GET",
      target: "/data",
      headers: [["Host", "evil.example"]],
    });
    assert.equal(evil.status, 421);
    assert.match(evil.body, /^this server does not answer for that host \(see ALLOWED_HOSTS\)\n$/);
    assert.deepEqual([seen.length, elsewhere.seen.length], [0, 0], "the loader never ran");
    // A load balancer's health check by IP address still gets an answer.
    const health = await rawRequest(app.url, {
      method: "GET",
      target: "/healthz",
      headers: [["Host", "10.0.0.7:8000"]],
    });
    assert.equal(health.status, 200);

    const page = await rawRequest(app.url, {
      method: "GET",
      target: "/data",
      headers: [["Host", "app.example"]],
    });
    assert.equal(page.status, 200);
    const name = `200 ok 200 ${elsewhere.url}/landed 200 ok TypeError`;
    assert.match(page.body, new RegExp(`Data for <!-- -->${name}`));
  } finally {
    await target.shutdown();
  }
  // The target got the trace on each hop; the host it sent the fetch to got neither header,
  // nor the credentials (another origin), and the POST arrived as a POST with its body.
  assert.deepEqual(seen.map(([path, , body]) => [path, body]), [
    ["/hop", ""],
    ["/away", ""],
    ["/away", "payload"],
    ["/hop", ""],
    ["/away", ""],
    ["/to-data", ""],
  ]);
  for (const [, headers] of seen) assert.match(headers.get("sentry-trace") ?? "", /^[0-9a-f]{32}-/);
  assert.equal(elsewhere.seen.length, 3);
  for (const headers of elsewhere.seen) {
    assert.equal(headers.get("sentry-trace"), null);
    assert.equal(headers.get("baggage"), null);
    assert.equal(headers.get("authorization"), null);
  }
});
