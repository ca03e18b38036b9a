/**
 * The tunnel's own HTTP/1.1 client over TLS, against a real `Deno.serve` with a certificate
 * from a throwaway CA (made with openssl): what production does against sentry.io.
 */
import assert from "node:assert/strict";
import { createIngestClient } from "../../../server/tunnel/ingest_client.ts";

// What the tunnel sends: a header record and manual redirects (anything else goes to fetch).
const headers = { "content-type": "application/x-sentry-envelope" };

/** A CA and a certificate it signed for 127.0.0.1, as PEM. */
async function makeCertificates(): Promise<{ ca: string; cert: string; key: string }> {
  const dir = await Deno.makeTempDir();
  const run = async (...args: string[]) => {
    const { success, stderr } = await new Deno.Command("openssl", { args, cwd: dir }).output();
    if (!success) throw new Error(`openssl ${args[0]}: ${new TextDecoder().decode(stderr)}`);
  };
  try {
    await run(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "1",
      "-subj",
      "/CN=test ca",
      "-keyout",
      "ca.key",
      "-out",
      "ca.pem",
    );
    await run(
      "req",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-subj",
      "/CN=127.0.0.1",
      "-keyout",
      "key.pem",
      "-out",
      "req.csr",
    );
    await Deno.writeTextFile(`${dir}/san.ext`, "subjectAltName=IP:127.0.0.1\n");
    await run(
      "x509",
      "-req",
      "-in",
      "req.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      "san.ext",
      "-out",
      "cert.pem",
    );
    const read = (name: string) => Deno.readTextFile(`${dir}/${name}`);
    return { ca: await read("ca.pem"), cert: await read("cert.pem"), key: await read("key.pem") };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("over TLS: envelopes whole and streamed arrive byte for byte, on kept-alive connections", async () => {
  const { ca, cert, key } = await makeCertificates();
  const received: number[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen() {} },
    async (req) => {
      const body = new Uint8Array(await req.arrayBuffer());
      received.push(body.length);
      return Response.json({ id: String(body.length) });
    },
  );
  const client = createIngestClient({ caCerts: [ca] });
  try {
    const url = `https://127.0.0.1:${server.addr.port}/api/1/envelope/`;
    const small = new Uint8Array(2048).fill(7);
    for (let i = 0; i < 5; i++) {
      const res = await client.fetch(url, {
        method: "POST",
        headers,
        body: small,
        redirect: "manual",
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { id: "2048" });
    }
    const large = new Uint8Array(300 * 1024).fill(9);
    const streamed = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < large.length; at += 64 * 1024) {
          controller.enqueue(large.subarray(at, at + 64 * 1024));
        }
        controller.close();
      },
    });
    const res = await client.fetch(
      url,
      {
        method: "POST",
        headers,
        body: streamed,
        redirect: "manual",
        duplex: "half",
      } as RequestInit,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { id: String(large.length) });
    assert.deepEqual(received, [2048, 2048, 2048, 2048, 2048, large.length]);
    assert.equal(client.stats.opened, 1, "one TLS connection, kept alive for all six");
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("over TLS: a certificate the client does not trust fails like fetch, as a TypeError", async () => {
  const { cert, key } = await makeCertificates();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen() {} },
    () => new Response("{}"),
  );
  const client = createIngestClient();
  try {
    const url = `https://127.0.0.1:${server.addr.port}/api/1/envelope/`;
    await assert.rejects(
      client.fetch(url, { method: "POST", headers, body: new Uint8Array(1), redirect: "manual" }),
      TypeError,
    );
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("over TLS: pipelined envelopes each get their own answer, on one connection", async () => {
  const { ca, cert, key } = await makeCertificates();
  const received: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert, key, onListen() {} },
    async (req) => {
      const body = await req.text();
      received.push(body);
      return Response.json({ id: body });
    },
  );
  const client = createIngestClient({ caCerts: [ca] });
  try {
    const pipeline = client.pipeline(`https://127.0.0.1:${server.addr.port}/api/1/envelope/`);
    const ids = Array.from({ length: 20 }, (_, i) => `envelope-${i}`);
    const answers = await Promise.all(
      ids.map((id) => pipeline.send(new TextEncoder().encode(id), headers)),
    );
    assert.deepEqual(answers.map((a) => JSON.parse(new TextDecoder().decode(a.body)).id), ids);
    assert.deepEqual(received, ids);
    assert.equal(pipeline.stats.opened, 1);
    assert.ok(pipeline.stats.batches < ids.length, `${pipeline.stats.batches} writes`);
  } finally {
    client.close();
    await server.shutdown();
  }
});

Deno.test("over TLS: a record the client cannot decrypt is a TypeError (a 502), and the connection is closed", async () => {
  const { ca, cert, key } = await makeCertificates();
  // An ingest that reads the request, then answers with an application-data record of noise,
  // as a broken middlebox would.
  const listener = Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert, key });
  const served = (async () => {
    const conn = await listener.accept();
    await conn.handshake();
    await conn.read(new Uint8Array(64 * 1024));
    return conn;
  })();
  const raw = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  // In front of it, a relay that forwards the handshake and, once the request has passed, adds
  // the noise record the client reads next.
  const relaying = (async () => {
    const client = await raw.accept();
    const upstream = await Deno.connect({
      hostname: "127.0.0.1",
      port: (listener.addr as Deno.NetAddr).port,
    });
    const pipe = async (from: Deno.Conn, to: Deno.Conn, after?: (bytes: number) => void) => {
      const buffer = new Uint8Array(64 * 1024);
      let total = 0;
      try {
        for (;;) {
          const n = await from.read(buffer);
          if (n === null) return;
          await to.write(buffer.subarray(0, n));
          after?.(total += n);
        }
      } catch {
        // Closed at the end of the test.
      }
    };
    let noise = false;
    const toServer = pipe(client, upstream, (total) => {
      // The handshake's client side is well under 1 KiB; the request carries a 4 KiB body.
      if (total > 4096 && !noise) {
        noise = true;
        const record = new Uint8Array([0x17, 3, 3, 0, 32, ...new Uint8Array(32).fill(7)]);
        client.write(record).catch(() => {});
      }
    });
    const toClient = pipe(upstream, client);
    return { client, upstream, done: Promise.all([toServer, toClient]) };
  })();
  const ingest = createIngestClient({ caCerts: [ca] });
  try {
    const url = `https://127.0.0.1:${(raw.addr as Deno.NetAddr).port}/api/1/envelope/`;
    const error = await ingest.fetch(url, {
      method: "POST",
      headers,
      body: new Uint8Array(4096),
      redirect: "manual",
    }).then(() => undefined, (error) => error);
    assert.ok(error instanceof TypeError, String(error));
    assert.ok((error as TypeError).cause instanceof Deno.errors.InvalidData, String(error.cause));
  } finally {
    ingest.close();
    (await served).close();
    const relay = await relaying;
    relay.client.close();
    relay.upstream.close();
    await relay.done;
    listener.close();
    raw.close();
  }
});
