/**
 * Server-side monitoring over real HTTP: the app with SENTRY_DSN pointing at a fake ingest.
 */
import assert from "node:assert/strict";
import type { Event } from "@sentry/core";
import { readManifest } from "../server/manifest.ts";
import { startFakeIngest } from "./support/fake_ingest.ts";
import { startServer } from "./support/server.ts";

const manifest = await readManifest();

async function transactions(ingest: ReturnType<typeof startFakeIngest>): Promise<Event[]> {
  const found: Event[] = [];
  for (const [, items] of await ingest.envelopes()) {
    for (const [header, payload] of items) {
      if (header.type === "transaction") found.push(payload as Event);
    }
  }
  return found;
}

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
    for (const path of [manifest.script, "/robots.txt", "/"]) {
      const res = await fetch(new URL(path, server.url));
      await res.body?.cancel();
    }
    // Stop: shutdown flushes the SDK, so everything it will ever send has arrived after this.
    const status = await server.stop("SIGTERM");
    assert.equal(status.code, 0);
    const names = (await transactions(ingest)).map((t) => t.transaction);
    assert.deepEqual(names, ["GET /"]);
  } finally {
    await server.stop();
  }
});

Deno.test("a server error is reported, and SIGINT still exits 0 while the ingest is slow", async () => {
  await using ingest = startFakeIngest({ delayMs: 300 });
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
    // Signal at once, while the slow ingest still holds the SDK's request: shutdown waits for
    // the flush (bounded by FLUSH_TIMEOUT_MS) and then exits cleanly.
    const status = await server.stop("SIGINT");
    assert.equal(status.code, 0);
    const events = (await ingest.envelopes()).flatMap(([, items]) =>
      items.filter(([h]) => h.type === "event").map(([, p]) => p as Event)
    );
    assert.equal(events.length, 1);
    assert.match(
      events[0].exception?.values?.[0].value ?? "",
      /Debug error from GET \/debug\/error/,
    );
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

    // A request that arrives inside a sampled trace is traced whatever the local rate.
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
