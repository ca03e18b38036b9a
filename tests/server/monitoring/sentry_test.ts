/**
 * Server-side monitoring over real HTTP: the app with SENTRY_DSN pointing at a fake ingest.
 */
import assert from "node:assert/strict";
import type { Event } from "@sentry/core";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { readManifest } from "../../../server/build/manifest.ts";
import { startMonitoring } from "../../../server/monitoring/sentry.ts";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import { startMonitoredApp } from "../../support/monitored_app.ts";
import { startServer } from "../../support/server.ts";
import { rawRequest } from "../../support/raw_http.ts";

const manifest = await readManifest();

async function itemsOf(
  ingest: ReturnType<typeof startFakeIngest>,
  type: "transaction" | "event",
): Promise<Event[]> {
  const found: Event[] = [];
  for (const [, items] of await ingest.envelopes()) {
    for (const [header, payload] of items) {
      if (header.type === type) found.push(payload as Event);
    }
  }
  return found;
}

function transactions(ingest: ReturnType<typeof startFakeIngest>): Promise<Event[]> {
  return itemsOf(ingest, "transaction");
}

const GENERIC_500 = /<h1>Something went wrong<\/h1>/;

Deno.test("request spans: pages are traced; the tunnel and static files are not", async () => {
  await using ingest = startFakeIngest();
  const dsn = ingest.dsn("key", "7");
  const server = await startServer({ SENTRY_DSN: dsn, SENTRY_TRACES_SAMPLE_RATE: "1" });
  try {
    const tunnelled = `${JSON.stringify({ dsn })}\n{"type":"event"}\n{"message":"from browser"}`;
    const post = await fetch(new URL("/monitoring", server.url), {
      method: "POST",
      body: tunnelled,
    });
    assert.equal(post.status, 200);
    await post.body?.cancel();
    for (const path of [manifest.script, "/robots.txt", "/?token=secret&email=a@b.example"]) {
      const res = await fetch(new URL(path, server.url));
      await res.body?.cancel();
    }
    // Health checks are not traced; a fragment (fetch never sends one) stays out of the URL.
    assert.equal(
      (await fetch(new URL("/healthz", server.url)).then((r) => r.text())).length > 0,
      true,
    );
    const fragment = await rawRequest(server.url, {
      method: "GET",
      target: "/#secret-fragment",
      headers: [["Host", new URL(server.url).host]],
    });
    assert.equal(fragment.status, 200);
    // Stop: shutdown flushes the SDK, so everything it will ever send has arrived after this.
    const status = await server.stop("SIGTERM");
    assert.equal(status.code, 0);
    const sent = await transactions(ingest);
    assert.deepEqual(sent.map((t) => t.transaction), ["GET /", "GET /"]);
    // As in the request log, the query string (tokens, personal data) stays on the server.
    for (const t of sent) assert.equal(t.request?.url, new URL("/", server.url).href);
  } finally {
    await server.stop();
  }
});

Deno.test("a server error is reported, and SIGINT still exits 0 while the ingest is slow", async () => {
  const answer = Promise.withResolvers<void>();
  await using ingest = startFakeIngest({ hold: answer.promise });
  const server = await startServer({
    SENTRY_DSN: ingest.dsn("key", "7"),
    DEBUG_ERROR_ROUTE: "true",
    SENTRY_TRACES_SAMPLE_RATE: "0",
  });
  try {
    const res = await fetch(new URL("/debug/error", server.url));
    assert.equal(res.status, 500);
    const body = await res.text();
    assert.ok(!body.includes("Debug error") && !body.includes(".ts:"), "no details leak");
    // Signal while the slow ingest holds the SDK's request, answered only once the server has
    // heard it: shutdown waits for the flush (bounded by FLUSH_TIMEOUT_MS), then exits cleanly.
    await ingest.waitFor(1, "complete");
    server.process.kill("SIGINT");
    for (let i = 0; i < 200 && !/server: stopping/.test(server.output()); i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.match(server.output(), /server: stopping/);
    answer.resolve();
    const status = await server.stop("SIGINT");
    assert.equal(status.code, 0);
    const events = await itemsOf(ingest, "event");
    assert.equal(events.length, 1);
    const exception = events[0].exception?.values?.[0];
    assert.match(exception?.value ?? "", /Debug error from GET \/debug\/error/);
    // A fault in the server's own code: unhandled, whatever the app did to answer.
    assert.deepEqual(exception?.mechanism, { type: "auto.http.deno", handled: false });
    // With the request it happened in, as the transaction names it.
    assert.equal(events[0].request?.method, "GET");
    assert.equal(events[0].request?.url, new URL("/debug/error", server.url).href);
    // Frames are relative to the app's root, so the issue groups alike on every host.
    const files = (exception?.stacktrace?.frames ?? []).map((f) => f.filename ?? "");
    assert.ok(files.includes("app:///server/app.ts"), JSON.stringify(files));
    const root = new URL("../../../", import.meta.url).pathname;
    const frames = JSON.stringify(exception?.stacktrace);
    assert.ok(!frames.includes(root), frames);
    // The error carries a trace (the request's), so it links to the browser's page load.
    assert.match(events[0].contexts?.trace?.trace_id ?? "", /^[0-9a-f]{32}$/);
  } finally {
    await server.stop();
  }
});

Deno.test("unsampled requests still hand the browser a trace to continue, and send nothing", async () => {
  await using ingest = startFakeIngest();
  const server = await startServer({
    SENTRY_DSN: ingest.dsn("key", "7"),
    SENTRY_TRACES_SAMPLE_RATE: "0",
    SENTRY_RELEASE: "r1",
  });
  try {
    const html = await (await fetch(server.url)).text();
    const trace = /<meta name="sentry-trace" content="([0-9a-f]{32})-[0-9a-f]{16}-0">/.exec(html);
    assert.ok(trace, "a sentry-trace meta tag marked not sampled");
    const baggage = /<meta name="baggage" content="([^"]+)">/.exec(html)?.[1] ?? "";
    for (
      const part of [
        `sentry-trace_id=${trace[1]}`,
        "sentry-sampled=false",
        "sentry-sample_rate=0",
        "sentry-release=r1",
        "sentry-public_key=key",
      ]
    ) assert.ok(baggage.includes(part), `${part} in ${baggage}`);

    // A request that arrives inside a sampled trace is traced while the budget lasts (10/s).
    const parent = "0123456789abcdef0123456789abcdef-0123456789abcdef-1";
    const continued = await fetch(server.url, { headers: { "sentry-trace": parent } });
    assert.match(
      await continued.text(),
      /content="0123456789abcdef0123456789abcdef-[0-9a-f]{16}-1"/,
    );
    assert.equal((await server.stop("SIGTERM")).code, 0);
    const traced = await transactions(ingest);
    assert.deepEqual(
      traced.map((t) => t.contexts?.trace?.trace_id),
      ["0123456789abcdef0123456789abcdef"],
    );
  } finally {
    await server.stop();
  }
});

Deno.test("a client's oversized trace context and User-Agent reach Sentry cut", async () => {
  await using ingest = startFakeIngest();
  const server = await startServer({
    SENTRY_DSN: ingest.dsn("key", "7"),
    SENTRY_TRACES_SAMPLE_RATE: "1",
    DEBUG_ERROR_ROUTE: "true",
  });
  try {
    const traceId = (n: number) => `${n}`.repeat(32);
    const headOf = (n: number, entries: string) => ({
      "sentry-trace": `${traceId(n)}-0123456789abcdef-1`,
      baggage: `sentry-trace_id=${traceId(n)},sentry-public_key=key,${entries}`,
    });
    // Over Sentry's own baggage limit: the trace goes on, the head's context does not.
    const huge = await fetch(server.url, {
      headers: headOf(1, `sentry-release=${"r".repeat(20_000)}`),
    });
    assert.equal(huge.status, 200);
    await huge.body?.cancel();
    // Under it, but every value longer than Sentry's ingest keeps.
    const long = await fetch(server.url, {
      headers: headOf(
        2,
        `sentry-release=${"r".repeat(4_000)},sentry-environment=${"e".repeat(1_000)},` +
          `sentry-transaction=${"t".repeat(1_000)},sentry-user_id=${"u".repeat(1_000)}`,
      ),
    });
    const page = await long.text();
    const baggage = /<meta name="baggage" content="([^"]+)">/.exec(page)?.[1] ?? "";
    assert.ok(baggage.length < 1_024, `${baggage.length} characters of baggage to the browser`);
    const error = await fetch(new URL("/debug/error", server.url), {
      headers: { ...headOf(3, "sentry-release=r3"), "user-agent": "U".repeat(30_000) },
    });
    assert.equal(error.status, 500);
    await error.body?.cancel();
    assert.equal((await server.stop("SIGTERM")).code, 0);

    const envelopes = await ingest.envelopes();
    const traceHeader = (n: number) =>
      envelopes.find(([, items]) =>
        items[0][0].type === "transaction" &&
        (items[0][1] as Event).contexts?.trace?.trace_id === traceId(n)
      )?.[0].trace as Record<string, string> | undefined;
    // The oversized head's trace is continued without its context (as with no baggage at all).
    assert.ok(traceHeader(1), "the trace with oversized baggage still continues");
    assert.equal(traceHeader(1)?.release, undefined);
    const cut = traceHeader(2);
    assert.deepEqual(
      [cut?.release, cut?.environment, cut?.transaction, cut?.user_id].map((v) => v?.length),
      [200, 64, 200, 128],
    );
    for (const [header] of envelopes) {
      const size = JSON.stringify(header).length;
      assert.ok(size < 2_048, `an envelope header of ${size} characters`);
    }
    // The User-Agent, in the error event and in its request's transaction, is cut as messages are.
    const events = [...await itemsOf(ingest, "event"), ...await transactions(ingest)]
      .filter((e) => e.contexts?.trace?.trace_id === traceId(3));
    assert.deepEqual(events.map((e) => e.type ?? "error").sort(), ["error", "transaction"]);
    for (const event of events) {
      assert.equal(event.request?.headers?.["user-agent"], "U".repeat(8 * 1024));
    }
  } finally {
    await server.stop();
  }
});

Deno.test("an error storm: every request answers 500, at most 10 events per error go out, the rest are counted", async () => {
  await using ingest = startFakeIngest();
  const server = await startServer({
    SENTRY_DSN: ingest.dsn("key", "7"),
    DEBUG_ERROR_ROUTE: "true",
    SENTRY_TRACES_SAMPLE_RATE: "0",
  });
  try {
    const url = new URL("/debug/error", server.url);
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(Array.from({ length: 10 }, async () => {
        const res = await fetch(url);
        return { status: res.status, body: await res.text() };
      }));
      for (const { status, body } of answers) {
        assert.equal(status, 500);
        assert.match(body, GENERIC_500);
      }
    }
    assert.equal((await server.stop("SIGTERM")).code, 0);
    // The debug route alternates two throws in one function (see throwDebugError) to get past
    // Sentry's dedupe; they are one error to the limit, as they are one issue to Sentry.
    const events = await itemsOf(ingest, "event");
    assert.equal(events.length, 10);
    // No event carries what the server logged for other requests: each request's console
    // breadcrumbs stay in its own isolation scope (at most its own "request failed" line).
    for (const event of events) {
      const logged = (event.breadcrumbs ?? []).filter((b) =>
        /request failed/.test(b.message ?? "")
      );
      assert.ok(logged.length <= 1, JSON.stringify(logged).slice(0, 500));
    }
    // Shutdown logs what the limit held back (otherwise once a minute), so it is not silent.
    const suppressed = /monitoring: (\d+) error events suppressed/.exec(server.output());
    assert.ok(suppressed, server.output().slice(-2000));
    assert.equal(Number(suppressed[1]), 90);
  } finally {
    await server.stop();
  }
});

Deno.test("malformed sentry-trace and baggage headers never fail a request or send anything", async () => {
  await using ingest = startFakeIngest();
  const server = await startServer({
    SENTRY_DSN: ingest.dsn("key", "7"),
    SENTRY_TRACES_SAMPLE_RATE: "0",
  });
  try {
    const trace = "0123456789abcdef0123456789abcdef";
    const hostile: Record<string, string>[] = [
      { "sentry-trace": "" },
      { "sentry-trace": "-" },
      { "sentry-trace": "garbage-garbage-1" },
      { "sentry-trace": `${trace}-0123456789abcdef-7` },
      { "sentry-trace": `${trace.toUpperCase()}-0123456789ABCDEF-1` },
      { "sentry-trace": "a".repeat(6000) + "-0123456789abcdef-1" },
      { "sentry-trace": `${trace} -0123456789abcdef-1` },
      { "sentry-trace": `${trace}-0123456789abcdef-1`.repeat(100) },
      { "sentry-trace": "__proto__", baggage: "__proto__=1,constructor=2" },
      { "sentry-trace": "%E0%A4%A-%", baggage: "sentry-release=%E0%A4%A,sentry-sample_rand=x" },
      { baggage: "sentry-sampled=true,sentry-sample_rand=0,=,,%%%" },
    ];
    for (const headers of hostile) {
      const res = await fetch(server.url, { headers });
      const html = await res.text();
      assert.equal(res.status, 200, JSON.stringify(headers).slice(0, 80));
      assert.match(html, /<meta name="sentry-trace" content="[0-9a-f]{32}-[0-9a-f]{16}-0">/);
    }
    assert.equal((await server.stop("SIGTERM")).code, 0);
    // At most the SDK's client report, counting the unsampled transactions.
    const sent = (await ingest.envelopes()).flatMap(([, items]) => items.map(([h]) => h.type));
    assert.deepEqual(
      sent.filter((type) => type !== "client_report"),
      [],
      "no event, no transaction",
    );
    assert.ok(!/request failed/.test(server.output()), server.output().slice(-2000));
  } finally {
    await server.stop();
  }
});

// In-process, so the test can give the budget a size: 2 honoured traces and no refill, which
// holds however slowly the machine runs. Last in this file: Sentry.init changes the process.
Deno.test({
  name: "incoming sampled traces beyond the budget follow the server's rate, and the page agrees",
  // The SDK's flush leaves a timer of its own (@sentry/core's promise buffer) for its timeout.
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await using ingest = startFakeIngest();
  await using app = startMonitoredApp(ingest, {}, { SENTRY_TRACES_SAMPLE_RATE: "0" }, {
    traceBudget: { limit: 2, windowMs: Infinity },
  });
  const incoming = Array.from(
    { length: 20 },
    (_, i) => `${i.toString(16).padStart(2, "0")}${"a".repeat(30)}`,
  );
  const pages: string[] = [];
  // As a browser SDK sends them: the head's dynamic sampling context in the baggage.
  const baggageOf = (traceId: string) =>
    `sentry-trace_id=${traceId},sentry-environment=browser-env,sentry-sample_rate=0.5,` +
    `sentry-sample_rand=0.25,sentry-sampled=true,sentry-public_key=key,other=x`;
  for (const traceId of incoming) {
    const res = await fetch(`${app.url}/`, {
      headers: { "sentry-trace": `${traceId}-0123456789abcdef-1`, baggage: baggageOf(traceId) },
    });
    assert.equal(res.status, 200);
    pages.push(await res.text());
  }
  await app.stop();
  const traced = await transactions(ingest);
  assert.equal(traced.length, 2, "only the budget's two are traced at rate 0");
  assert.deepEqual(traced.map((t) => t.contexts?.trace?.trace_id).sort(), incoming.slice(0, 2));
  for (const t of traced) {
    const trace = t.contexts?.trace;
    assert.equal(trace?.parent_span_id, "0123456789abcdef");
    assert.equal(t.transaction, "GET /");
    assert.equal(trace?.op, "http.server");
    assert.equal(trace?.status, "ok");
    assert.equal(t.sdk?.name, "sentry.javascript.deno");
    assert.equal(t.release, "r1");
    assert.ok((t.timestamp ?? 0) >= (t.start_timestamp ?? Infinity), "ends after it starts");
    // The page handed the browser this very span as the parent of its page load.
    const page = pages[incoming.indexOf(trace?.trace_id ?? "")];
    assert.ok(page.includes(`content="${trace?.trace_id}-${trace?.span_id}-1"`));
  }
  // Every page continues the incoming trace and its flag is the server's decision. Within the
  // budget the head's sampling context is passed on unchanged (frozen); past it none of the
  // client's context decides, so none of it is passed on.
  const flags = pages.map((html, i) => {
    const meta = /<meta name="sentry-trace" content="([0-9a-f]{32})-[0-9a-f]{16}-([01])">/
      .exec(html);
    assert.equal(meta?.[1], incoming[i]);
    const baggage = /<meta name="baggage" content="([^"]+)">/.exec(html)?.[1] ?? "";
    const head = baggageOf(incoming[i]).split(",").filter((e) => e.startsWith("sentry-"));
    const expected = i < 2 ? head : ["sentry-sample_rate=0"];
    assert.deepEqual(baggage.split(",").sort(), expected.sort());
    return meta?.[2];
  });
  assert.deepEqual(flags, ["1", "1", ...Array(18).fill("0")]);
  // The envelopes' trace headers carry the head's context too, not one rebuilt locally.
  for (const [header, items] of await ingest.envelopes()) {
    if (items[0][0].type !== "transaction") continue;
    const trace = header.trace as Record<string, unknown> | undefined;
    assert.equal(trace?.environment, "browser-env");
    assert.equal(trace?.sample_rand, "0.25");
    assert.equal(trace?.sample_rate, "0.5");
  }
});

Deno.test({
  name: "whatever the app throws, the error is reported, bounded, and flush is not left waiting",
  // The SDK's client is process-wide: its keep-alive connection to the ingest closes after the
  // test (when the ingest does), and its flush leaves a timer of its own (@sentry/core's promise
  // buffer) running for the timeout.
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await using ingest = startFakeIngest();
  const config = loadConfig({ SENTRY_DSN: ingest.dsn("key", "8"), HOST: "127.0.0.1", PORT: "0" });
  const monitoring = startMonitoring(config, "r1");
  const unreadable = new Error("x");
  Object.defineProperty(unreadable, "stack", {
    get() {
      throw new Error("getter boom");
    },
  });
  const thrown = [
    Symbol("odd"),
    unreadable,
    new AggregateError(Array.from({ length: 20_000 }, (_, i) => new Error(`child ${i}`)), "many"),
    new Error(`bad input: ${"m".repeat(1_000_000)}`),
  ];
  for (const value of thrown) monitoring.captureError(value);
  // False when it ran into its timeout, as it did once the SDK choked on a value.
  assert.equal(await monitoring.flush(5_000), true, "flush finished");
  const events = await itemsOf(ingest, "event");
  assert.equal(events.length, thrown.length);
  for (const event of events) {
    assert.ok(JSON.stringify(event).length < 64 * 1024, `${JSON.stringify(event).length} bytes`);
  }
  const aggregate = events.find((e) => e.exception?.values?.some((v) => v.value === "many"));
  assert.ok((aggregate?.exception?.values?.length ?? 0) <= 6, "five linked errors at most");
});
