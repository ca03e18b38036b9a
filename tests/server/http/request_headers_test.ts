import assert from "node:assert/strict";
import fc from "fast-check";
import { requestHeader, requestHeaderBytes } from "../../../server/http/request_headers.ts";
import { readManifest } from "../../../server/build/manifest.ts";
import { fixtureApp } from "../../fixtures/app.ts";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { spyOnHeaders } from "../../support/header_spy.ts";

// The names read; a request carries any of them but Host (a second Host is refused with 400).
const NAMES = [
  "host",
  "x-request-id",
  "accept-encoding",
  "sentry-trace",
  "x-a",
  "x-forwarded-proto",
];
const FIELD_NAMES = [...NAMES.slice(1), "X-A", "X-Request-ID", "X-Forwarded-Proto"];

// One served request: what requestHeader and requestHeaderBytes said, whether they touched
// `req.headers`, and what `req.headers` itself says afterwards.
interface Seen {
  ours: (string | null)[];
  bytes: number;
  touched: boolean;
  theirs: (string | null)[];
}

async function withServer(run: (port: number, seen: Seen[]) => Promise<void>): Promise<void> {
  const seen: Seen[] = [];
  const getHeaders = Object.getOwnPropertyDescriptor(Request.prototype, "headers")!.get!;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    let touched = false;
    Object.defineProperty(req, "headers", {
      get() {
        touched = true;
        return getHeaders.call(req);
      },
    });
    const lower = NAMES.map((name) => name.toLowerCase());
    const ours = lower.map((name) => requestHeader(req, name));
    const bytes = requestHeaderBytes(req);
    const wasTouched = touched;
    seen.push({ ours, bytes, touched: wasTouched, theirs: lower.map((n) => req.headers.get(n)) });
    return new Response("ok");
  });
  try {
    await run(server.addr.port, seen);
  } finally {
    await server.shutdown();
  }
}

async function sendRaw(port: number, lines: [string, string][]): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = `GET / HTTP/1.1\r\n${lines.map(([n, v]) => `${n}: ${v}\r\n`).join("")}\r\n`;
    // One byte per character, so a value's byte length is its string length.
    await conn.write(Uint8Array.from(head, (char) => char.charCodeAt(0)));
    const buf = new Uint8Array(4096);
    while ((await conn.read(buf)) !== null) { /* read to the end */ }
  } finally {
    conn.close();
  }
}

// Field values as a client may send them: visible ASCII, inner spaces and tabs, bytes over 0x7f
// (written as single Latin-1 bytes, as Deno reads them back), empty values. No outer whitespace:
// the parser trims that, so the sizes would differ by design.
const value = fc.string({
  unit: fc.constantFrom(..."abcXYZ019 \t,;=-_./:\"'\xe9\xff\x80"),
  maxLength: 40,
})
  .map((text) => text.trim());

Deno.test("requestHeader: a served request's headers, read without touching req.headers", async () => {
  await withServer(async (port, seen) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...FIELD_NAMES), value), { maxLength: 8 }),
        async (fields) => {
          const lines: [string, string][] = [
            ["Host", "127.0.0.1"],
            ...fields,
            ["Connection", "close"],
          ];
          const before = seen.length;
          await sendRaw(port, lines);
          assert.equal(seen.length, before + 1, "the request was not served");
          const last = seen.at(-1)!;
          assert.equal(last.touched, false, "req.headers was read");
          assert.deepEqual(last.ours, last.theirs);
          const size = lines.reduce((sum, [n, v]) => sum + n.length + v.length + 4, 0);
          assert.equal(last.bytes, size);
        },
      ),
      { numRuns: 60 },
    );
  });
});

Deno.test("requestHeader: a Request built in JavaScript is read through req.headers", () => {
  const req = new Request("http://x/", {
    headers: [["x-a", "1"], ["X-A", "2"], ["host", "x.example"]],
  });
  assert.equal(requestHeader(req, "x-a"), "1, 2");
  assert.equal(requestHeader(req, "host"), "x.example");
  assert.equal(requestHeader(req, "sentry-trace"), null);
  // Combined as Headers combines them: "x-a: 1, 2" and "host: x.example".
  assert.equal(requestHeaderBytes(req), "x-a".length + 4 + 4 + "host".length + 9 + 4);
});

Deno.test("the app answers pages, assets and refusals without touching req.headers", async () => {
  const { app } = await fixtureApp();
  const spy = spyOnHeaders(app);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, spy.handler);
  const manifest = await readManifest();
  try {
    const base = `http://127.0.0.1:${server.addr.port}`;
    const asked: [string, RequestInit, number][] = [
      ["/", { headers: { "x-request-id": "spy-1" } }, 200],
      [manifest.script, { headers: { "accept-encoding": "br, gzip" } }, 200],
      [manifest.script, { headers: { "if-none-match": '"nothing"' } }, 200],
      ["/healthz", {}, 200],
      ["/no-such-page", {}, 404],
      ["/", { method: "POST" }, 405],
    ];
    for (const [path, init, status] of asked) {
      const res = await fetch(base + path, init);
      await res.body?.cancel();
      assert.equal(res.status, status, path);
    }
    assert.deepEqual(spy.touched, []);
  } finally {
    await server.shutdown();
  }
});

Deno.test("the tunnel forwards and refuses envelopes without touching req.headers", async () => {
  const dsn = "http://public@127.0.0.1:9/1";
  const forwarded: Headers[] = [];
  const ingest: typeof fetch = async (_url, init) => {
    forwarded.push(new Headers(init?.headers));
    await new Response(init?.body).arrayBuffer();
    return Response.json({ id: "0".repeat(32) });
  };
  const { app } = await fixtureApp({ config: loadConfig({ SENTRY_DSN: dsn }), fetch: ingest });
  const spy = spyOnHeaders(app);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, spy.handler);
  const envelope = (of: string) =>
    new TextEncoder().encode(`{"dsn":"${of}"}\n{"type":"event"}\n{}`);
  const gzipped = await new Response(
    new Blob([envelope(dsn)]).stream().pipeThrough(new CompressionStream("gzip")),
  ).bytes();
  try {
    const url = `http://127.0.0.1:${server.addr.port}/monitoring`;
    const asked: [RequestInit, number][] = [
      [{ body: envelope(dsn), headers: { "user-agent": "spy-agent" } }, 200],
      [{ body: gzipped, headers: { "content-encoding": "gzip" } }, 200],
      [{ body: new Blob([envelope(dsn)]).stream() }, 200],
      [{ body: envelope("http://other@127.0.0.1:9/2") }, 403],
      [{ body: envelope(dsn), headers: { "content-encoding": "zstd" } }, 415],
    ];
    for (const [init, status] of asked) {
      const res = await fetch(url, { method: "POST", ...init });
      await res.body?.cancel();
      assert.equal(res.status, status, JSON.stringify(init.headers));
    }
    assert.deepEqual(spy.touched, []);
    // What the tunnel read from the record reached the ingest.
    assert.equal(forwarded.length, 3);
    assert.equal(forwarded[0].get("user-agent"), "spy-agent");
    assert.equal(forwarded[0].get("x-sentry-forwarded-for"), "127.0.0.1");
    assert.equal(forwarded[1].get("content-encoding"), "gzip");
  } finally {
    await server.shutdown();
  }
});
