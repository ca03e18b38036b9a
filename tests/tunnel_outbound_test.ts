/**
 * The tunnel's way out, with the real server started as `deno task start` starts it: through
 * the outbound proxy HTTP_PROXY names (the server's own Sentry events too), and over TLS to an ingest whose certificate only a
 * private CA given by DENO_CERT vouches for. Deno reads both when the process starts, so each
 * case is a server of its own.
 */
import assert from "node:assert/strict";
import { sha256Hex, startFakeIngest } from "./support/fake_ingest.ts";
import { startServer } from "./support/server.ts";
import { makeCertificates } from "./support/certificates.ts";

const encoder = new TextEncoder();

function envelope(dsn: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${JSON.stringify({ dsn })}\n{"type":"event"}\n{"message":"out"}\n`);
}

async function post(url: string, body: Uint8Array<ArrayBuffer>) {
  const response = await fetch(new URL("/monitoring", url), { method: "POST", body });
  return { status: response.status, text: await response.text() };
}

Deno.test("with HTTP_PROXY set, the tunnel's envelopes and the server's own events go through that proxy", async () => {
  await using ingest = startFakeIngest();
  // A forward proxy: requests arrive in absolute form (`POST http://host:port/path`), are
  // recorded, and are sent on as they came.
  const proxied: string[] = [];
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    proxied.push(`${req.method} ${req.url}`);
    return fetch(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      redirect: "manual",
    });
  });
  const dsn = ingest.dsn();
  // The server's own events go to a project of their own, told apart by its path.
  const serverDsn = ingest.dsn("server", "2");
  const server = await startServer({
    TUNNEL_ALLOWED_DSNS: dsn,
    SENTRY_DSN: serverDsn,
    SENTRY_TRACES_SAMPLE_RATE: "0",
    DEBUG_ERROR_ROUTE: "true",
    HTTP_PROXY: `http://127.0.0.1:${proxy.addr.port}`,
  });
  try {
    const sent = envelope(dsn);
    const answer = await post(server.url, sent);
    assert.equal(answer.status, 200, answer.text);
    await ingest.waitFor(1, "complete"); // queued, then sent
    assert.deepEqual(proxied, [`POST ${ingest.url}/api/1/envelope/`]);
    assert.equal(ingest.requests[0].sha256, await sha256Hex(sent));
    // A server error: its event leaves through the same proxy, to the server's project.
    const failed = await fetch(new URL("/debug/error", server.url));
    await failed.body?.cancel();
    assert.equal(failed.status, 500);
    await ingest.waitFor(2, "complete");
    const own = ingest.requests.filter((r) => r.path.startsWith("/api/2/envelope/?"));
    assert.equal(own.length, 1);
    assert.match(new TextDecoder().decode(own[0].body), /Debug error from GET \/debug\/error/);
    // Every request the ingest received came through the proxy.
    assert.deepEqual(proxied, ingest.requests.map((r) => `POST ${ingest.url}${r.path}`));
    // The launcher granted the proxy's host to the server it started (Deno 2.9 would not ask).
    const ps = await new Deno.Command("ps", {
      args: ["-o", "args=", "--ppid", String(server.process.pid)],
    }).output();
    const allowNet = new TextDecoder().decode(ps.stdout).match(/--allow-net=(\S+)/)?.[1];
    assert.ok(allowNet?.split(",").includes(`127.0.0.1:${proxy.addr.port}`), allowNet);
  } finally {
    await server.stop();
    await proxy.shutdown();
  }
});

Deno.test("an ingest over TLS with a private CA: reached with DENO_CERT, held as unreachable without", async () => {
  const { ca, cert, key } = await makeCertificates();
  const caFile = await Deno.makeTempFile({ suffix: ".pem" });
  await Deno.writeTextFile(caFile, ca);
  const received: string[] = [];
  const ingest = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen() {} },
    async (req) => {
      received.push(await sha256Hex(new Uint8Array(await req.arrayBuffer())));
      return Response.json({ id: "0".repeat(32) });
    },
  );
  const dsn = `https://public@127.0.0.1:${ingest.addr.port}/1`;
  const sent = envelope(dsn);
  try {
    for (const trusted of [true, false]) {
      const server = await startServer({
        TUNNEL_ALLOWED_DSNS: dsn,
        ...(trusted ? { DENO_CERT: caFile } : {}),
      });
      try {
        const answer = await post(server.url, sent);
        assert.equal(answer.status, 200, answer.text); // queued either way
        const sign = trusted
          ? () => received.length === 1
          : () => /ingest not answering/.test(server.output());
        for (let waited = 0; !sign(); waited += 25) {
          if (waited > 10_000) throw new Error(`not delivered nor failed:\n${server.output()}`);
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
      } finally {
        await server.stop();
      }
    }
    assert.deepEqual(received, [await sha256Hex(sent)]);
  } finally {
    await ingest.shutdown();
    await Deno.remove(caFile);
  }
});
