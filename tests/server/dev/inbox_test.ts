/**
 * The dev inbox: the store and its intakes as plain functions, then over real HTTP: on in dev
 * mode without a DSN (browser envelopes through the tunnel, the server's own errors), absent in
 * production.
 */
import assert from "node:assert/strict";
import { brotliCompressSync } from "node:zlib";
import { ConfigError, loadConfig } from "../../../server/lifecycle/config.ts";
import { DEV_INBOX_DSN, STDIN_LIFELINE_FLAG } from "../../../server/constants.ts";
import { DevInbox, inboxFetch, inboxPage } from "../../../server/dev/inbox.ts";
import { servingArgs } from "../../../server/lifecycle/serve_args.ts";
import { startServer } from "../../support/server.ts";
import { rawRequest } from "../../support/raw_http.ts";
import { memory } from "../../support/process_memory.ts";

// main.ts with the flags `deno task dev` gives it (PORT=0 and HOST=127.0.0.1, as startServer),
// but no stdin lifeline: no runner holds the other end here.
const devArgs = servingArgs(loadConfig({ DEV_MODE: "true", PORT: "0", HOST: "127.0.0.1" }), {}, {
  mode: "dev",
}).filter((arg) => arg !== STDIN_LIFELINE_FLAG);

const INBOX_INGEST = "http://inbox.invalid/api/0/envelope/";

function errorEnvelope(message: string, dsn = DEV_INBOX_DSN): string {
  const event = {
    event_id: "0123456789abcdef0123456789abcdef",
    exception: {
      values: [{
        type: "TypeError",
        value: message,
        stacktrace: {
          frames: [
            { function: "outer", filename: "http://x/build/main.js", lineno: 1, colno: 2 },
            { function: "inner", filename: "http://x/build/main.js", lineno: 30, colno: 7 },
          ],
        },
      }],
    },
    contexts: { trace: { trace_id: "abcdefabcdefabcdefabcdefabcdefab" } },
  };
  return `${JSON.stringify({ dsn })}\n{"type":"event"}\n${JSON.stringify(event)}\n`;
}

function transactionEnvelope(name: string): string {
  const transaction = {
    type: "transaction",
    transaction: name,
    start_timestamp: 1000,
    timestamp: 1000.25,
    spans: [{}, {}],
    contexts: { trace: { trace_id: "1234", op: "pageload", status: "ok" } },
  };
  return `{}\n{"type":"transaction"}\n${JSON.stringify(transaction)}\n{"type":"session"}\n{}\n`;
}

const bytes = (text: string) => new TextEncoder().encode(text);

Deno.test("config: the inbox is on in dev mode without a DSN, and only then by default", () => {
  const dev = loadConfig({ DEV_MODE: "true" });
  assert.equal(dev.devInbox, true);
  assert.equal(dev.sentryDsn, DEV_INBOX_DSN);
  assert.equal(dev.tunnelAllowedDsns[0].hostname, "inbox.invalid");
  assert.equal(dev.sentryEnvironment, "development");
  assert.equal(dev.tracesSampleRate, 1);
  const withDsn = loadConfig({ DEV_MODE: "true", SENTRY_DSN: "https://k@o1.ingest.sentry.io/2" });
  assert.equal(withDsn.devInbox, false);
  assert.equal(withDsn.sentryDsn, "https://k@o1.ingest.sentry.io/2");
  const production = loadConfig({});
  assert.equal(production.devMode, false);
  assert.equal(production.devInbox, false);
  assert.equal(production.sentryDsn, undefined);
  assert.equal(loadConfig({ DEV_INBOX: "true" }).sentryDsn, DEV_INBOX_DSN);
  assert.throws(
    () => loadConfig({ DEV_INBOX: "true", SENTRY_DSN: "https://k@o1.ingest.sentry.io/2" }),
    (error) => error instanceof ConfigError && /^DEV_INBOX: /.test(error.message),
  );
});

Deno.test("DevInbox keeps errors and transactions, with stack (innermost first) and trace id", () => {
  const inbox = new DevInbox();
  inbox.add(bytes(errorEnvelope("x is undefined")), "browser");
  inbox.add(bytes(transactionEnvelope("/checkout")), "server");
  const [error, transaction] = inbox.entries;
  assert.deepEqual(transaction, {
    source: "server",
    kind: "transaction",
    title: "/checkout (250 ms)",
    traceId: "1234",
  });
  assert.deepEqual(error, {
    source: "browser",
    kind: "error",
    title: "TypeError: x is undefined",
    stack: "at inner (http://x/build/main.js:30:7)\nat outer (http://x/build/main.js:1:2)",
    traceId: "abcdefabcdefabcdefabcdefabcdefab",
  });
  assert.throws(() => inbox.add(bytes("not an envelope"), "browser"));
});

Deno.test("DevInbox is bounded: the oldest entries are dropped", () => {
  const inbox = new DevInbox(3);
  for (let i = 0; i < 5; i++) inbox.add(bytes(errorEnvelope(`error ${i}`)), "browser");
  assert.deepEqual(inbox.entries.map((e) => e.title), [
    "TypeError: error 2",
    "TypeError: error 3",
    "TypeError: error 4",
  ]);
});

Deno.test("the inbox page lists newest first and escapes what the SDKs sent", async () => {
  const inbox = new DevInbox();
  inbox.add(bytes(errorEnvelope("the older one")), "browser");
  inbox.add(bytes(transactionEnvelope("/checkout")), "server");
  inbox.add(bytes(errorEnvelope("<img src=x onerror=alert(1)>")), "browser");
  const html = await inboxPage(inbox).text();
  assert.ok(!html.includes("<img"));
  assert.match(html, /TypeError: &#60;img src=x onerror=alert\(1\)&#62;/);
  assert.ok(html.indexOf("onerror") < html.indexOf("the older one"));
  assert.match(
    html,
    /transaction from server · trace 1234<\/div><b>\/checkout \(250 ms\)<\/b><\/li>/,
  );
});

Deno.test("inboxFetch answers the inbox's ingest itself (gzip and br too) and passes the rest on", async () => {
  const inbox = new DevInbox();
  const upstreamCalls: string[] = [];
  const upstream: typeof fetch = (input) => {
    upstreamCalls.push(String(input));
    return Promise.resolve(new Response("upstream"));
  };
  const tunnelFetch = inboxFetch(inbox, upstream, 1024 * 1024);

  const plain = await tunnelFetch(INBOX_INGEST, { method: "POST", body: errorEnvelope("plain") });
  assert.equal(plain.status, 200);
  assert.match(await plain.text(), /^\{"id":"[0-9a-f]{32}"\}$/);
  const gzipped = new Response(
    new Blob([errorEnvelope("gzipped")]).stream().pipeThrough(new CompressionStream("gzip")),
  );
  const compressed = await tunnelFetch(INBOX_INGEST, {
    method: "POST",
    headers: { "content-encoding": "gzip" },
    body: new Uint8Array(await gzipped.arrayBuffer()),
  });
  assert.equal(compressed.status, 200);
  await compressed.body?.cancel();
  // Every encoding the tunnel accepts, brotli included, reads here too.
  const brotli = await tunnelFetch(INBOX_INGEST, {
    method: "POST",
    headers: { "content-encoding": "br" },
    body: new Uint8Array(brotliCompressSync(errorEnvelope("brotli"))),
  });
  assert.equal(brotli.status, 200);
  await brotli.body?.cancel();
  const refused = await tunnelFetch(INBOX_INGEST, { method: "POST", body: "garbage" });
  assert.equal(refused.status, 400);
  await refused.body?.cancel();
  assert.deepEqual(inbox.entries.map((e) => e.title), [
    "TypeError: plain",
    "TypeError: gzipped",
    "TypeError: brotli",
  ]);

  const other = await tunnelFetch("https://o1.ingest.sentry.io/api/1/envelope/", {
    method: "POST",
    body: "x",
  });
  assert.equal(await other.text(), "upstream");
  assert.deepEqual(upstreamCalls, ["https://o1.ingest.sentry.io/api/1/envelope/"]);
});

Deno.test("dev mode without SENTRY_DSN: browser and server reports land in the inbox", async () => {
  const server = await startServer({ DEV_MODE: "true", DEBUG_ERROR_ROUTE: "true" }, {
    args: devArgs,
  });
  const url = (path: string) => new URL(path, server.url).href;
  try {
    // Both SDKs are on: the page hands the browser the inbox DSN and the tunnel.
    const html = await (await fetch(url("/"))).text();
    assert.ok(html.includes(`"dsn":"${DEV_INBOX_DSN}"`), html);
    assert.ok(html.includes(`"tunnel":"/monitoring"`));

    const posted = await fetch(url("/monitoring"), {
      method: "POST",
      body: errorEnvelope("thrown in the browser <b>"),
    });
    assert.equal(posted.status, 200);
    await posted.body?.cancel();
    const debug = await fetch(url("/debug/error"));
    assert.equal(debug.status, 500);
    await debug.body?.cancel();
    // An envelope for a DSN that is not allowed still gets the tunnel's 403.
    const foreign = await fetch(url("/monitoring"), {
      method: "POST",
      body: errorEnvelope("elsewhere", "https://key@o1.ingest.sentry.io/5"),
    });
    assert.equal(foreign.status, 403);
    await foreign.body?.cancel();

    // Traced requests become transactions in batches, a few milliseconds later
    // (server/batch_queue.ts): wait for the page load's.
    let inbox = "";
    for (const deadline = Date.now() + 5_000; Date.now() < deadline;) {
      const page = await fetch(url("/_dev/inbox"));
      assert.equal(page.status, 200);
      assert.equal(page.headers.get("content-type"), "text/html; charset=utf-8");
      inbox = await page.text();
      if (inbox.includes("transaction from server")) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.match(inbox, /error from browser · trace abcdefabcdefabcdefabcdefabcdefab/);
    assert.match(inbox, /TypeError: thrown in the browser &#60;b&#62;/);
    assert.match(inbox, /at inner \(http:\/\/x\/build\/main\.js:30:7\)/);
    assert.match(inbox, /error from server .*Debug error from GET \/debug\/error/s);
    assert.match(inbox, /transaction from server/);
    assert.ok(!inbox.includes("elsewhere"));
    // Newest first: the server's error came after the browser's.
    assert.ok(inbox.indexOf("Debug error") < inbox.indexOf("thrown in the browser"));
    // Printed right after the start-up line, which is all startServer waits for.
    assert.match(server.output(), /Monitoring goes to the dev inbox: http:\/\/\S+\/_dev\/inbox/);
  } finally {
    await server.stop();
  }
});

Deno.test("production: no inbox, no dev endpoints, no dev script, whatever DEV_* says", async () => {
  // The start task is not granted the dev variables, so they are not even read.
  const server = await startServer({ DEV_MODE: "true", DEV_INBOX: "true" });
  try {
    for (const path of ["/_dev/inbox", "/_dev/reload", "/_dev/client.js"]) {
      const res = await fetch(new URL(path, server.url));
      assert.equal(res.status, 404, path);
      await res.body?.cancel();
    }
    const html = await (await fetch(server.url)).text();
    assert.ok(!html.includes("/_dev/"));
    assert.ok(!html.includes("inbox.invalid"));
    assert.doesNotMatch(server.output(), /dev inbox/);
  } finally {
    await server.stop();
  }
});

Deno.test("DEV_INBOX=true turns the inbox on explicitly, without dev mode", async () => {
  const server = await startServer({ DEV_INBOX: "true" }, { args: devArgs });
  try {
    const inbox = await fetch(new URL("/_dev/inbox", server.url));
    assert.equal(inbox.status, 200);
    await inbox.body?.cancel();
    const reload = await fetch(new URL("/_dev/reload", server.url));
    assert.equal(reload.status, 404, "live reload stays a dev-mode feature");
    await reload.body?.cancel();
  } finally {
    await server.stop();
  }
});

Deno.test("DevInbox lists replays, feedback, profiles and logs, and skips recordings and sessions", () => {
  const trace = "0123456789abcdef0123456789abcdef";
  const item = (type: string, payload: unknown) => `{"type":"${type}"}\n${JSON.stringify(payload)}`;
  // Binary in real life (deflated); its length header is what makes it a recording here.
  const recording = `{"type":"replay_recording","length":3}\nx\0y`;
  const envelope = [
    "{}",
    item("replay_event", {
      replay_id: "r1",
      replay_type: "buffer",
      segment_id: 0,
      trace_ids: [trace],
    }),
    recording,
    item("feedback", {
      contexts: { feedback: { message: "slow cart" }, trace: { trace_id: trace } },
    }),
    item("profile", {
      transactions: [{ name: "/", trace_id: trace }],
      profile: { samples: [1, 2] },
    }),
    item("log", {
      items: [{ level: "info", body: "shown", trace_id: trace }, { level: "warn", body: "slow" }],
    }),
    item("session", { sid: "s1" }),
  ].join("\n");
  const inbox = new DevInbox();
  inbox.add(bytes(`${envelope}\n`), "browser");
  assert.deepEqual(inbox.entries.map((e) => [e.kind, e.title, e.traceId]), [
    ["replay", "buffer replay r1, segment 0", trace],
    ["feedback", "slow cart", trace],
    ["profile", "/ (2 samples)", trace],
    ["log", "info: shown", trace],
    ["log", "warn: slow", undefined],
  ]);
  // An item that is not what its type says is skipped, not a crash.
  inbox.add(bytes(`{}\n${item("log", { items: "x" })}\n${item("profile", {})}\n`), "server");
  assert.deepEqual(inbox.entries.slice(5).map((e) => e.title), ["undefined (0 samples)"]);
});

/** An envelope for the inbox whose 300 MiB of zeros gzip to about 300 KB. */
async function gzipBomb(): Promise<Uint8Array<ArrayBuffer>> {
  const zeros = new Uint8Array(1024 * 1024);
  let left = 300;
  const source = new ReadableStream<Uint8Array<ArrayBuffer>>({
    start: (c) =>
      c.enqueue(new TextEncoder().encode(`{"dsn":"${DEV_INBOX_DSN}"}\n{"type":"event"}\n`)),
    pull: (c) => left-- > 0 ? c.enqueue(zeros) : c.close(),
  });
  return await new Response(source.pipeThrough(new CompressionStream("gzip"))).bytes();
}

Deno.test("dev server: another Host is refused (DNS rebinding); a gzip bomb is refused while decoding, memory flat", async () => {
  const bomb = await gzipBomb();
  assert.ok(bomb.byteLength < 400_000, `${bomb.byteLength} bytes`);
  const server = await startServer({ DEV_MODE: "true" }, { args: devArgs });
  try {
    for (const path of ["/_dev/inbox", "/", "/healthz"]) {
      const res = await rawRequest(server.url, {
        method: "GET",
        target: path,
        headers: [["Host", `attacker.example:${new URL(server.url).port}`]],
      });
      assert.equal(res.status, 421, path);
      assert.doesNotMatch(res.body, /inbox|<html/i);
    }
    for (const host of ["localhost:1", "127.0.0.1", "[::1]:80"]) {
      const res = await rawRequest(server.url, {
        method: "GET",
        target: "/_dev/inbox",
        headers: [["Host", host]],
      });
      assert.equal(res.status, 200, host);
    }
    const warm = await fetch(new URL("/monitoring", server.url), {
      method: "POST",
      body: errorEnvelope("warm"),
    });
    assert.equal(warm.status, 200);
    await warm.body?.cancel();
    const before = await memory(server.process.pid);
    const res = await fetch(new URL("/monitoring", server.url), {
      method: "POST",
      body: bomb,
      headers: { "content-encoding": "gzip" },
    });
    assert.equal(res.status, 200, "queued: the inbox decodes it when the queue delivers it");
    await res.body?.cancel();
    // Sent after the bomb: once it is in the inbox, the bomb's delivery has started.
    const marker = await fetch(new URL("/monitoring", server.url), {
      method: "POST",
      body: errorEnvelope("after the bomb"),
    });
    assert.equal(marker.status, 200);
    await marker.body?.cancel();
    let page = "";
    for (let polls = 0; polls < 100 && !page.includes("after the bomb"); polls++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      page = await (await fetch(new URL("/_dev/inbox", server.url))).text();
    }
    assert.match(page, /after the bomb/);
    // Memory read until the process is gone: the drain at shutdown waits for the bomb's answer.
    let after = await memory(server.process.pid); // alive: the peak so far
    const stopped = server.stop();
    for (;;) {
      try {
        after = await memory(server.process.pid);
      } catch {
        break; // exited
      }
    }
    await stopped;
    assert.match(server.output(), /envelopes dropped: 1 ingest refused \(413\)/, "refused");
    assert.equal([...page.matchAll(/error from browser/g)].length, 2, "the bomb never stored");
    const grew = `RSS ${before.rss.toFixed(1)} -> ${after.rss.toFixed(1)} MiB, peak ${
      after.peak.toFixed(1)
    }`;
    assert.ok(after.peak - before.rss < 50, grew);
    console.log(grew);
  } finally {
    await server.stop();
  }
});

Deno.test("DevInbox: a message is kept cut, however long", () => {
  const inbox = new DevInbox();
  inbox.add(new TextEncoder().encode(errorEnvelope("x".repeat(1024 * 1024))), "browser");
  assert.ok(inbox.entries[0].title.length <= 1000, `${inbox.entries[0].title.length}`);
});
