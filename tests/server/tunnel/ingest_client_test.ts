/**
 * The tunnel's HTTP/1.1 client against a scripted ingest on 127.0.0.1: a raw TCP server that
 * reads each request and answers exactly the bytes a test gives it, so framing, keep-alive and
 * closed connections are under the test's control.
 */
import assert from "node:assert/strict";
import { createIngestClient, type IngestClient } from "../../../server/tunnel/ingest_client.ts";
import { sameTurn } from "../../support/same_turn.ts";
import { SETTLE_IDLE_MS } from "../../../server/tunnel/connect.ts";

function test(name: string, fn: () => Promise<void>) {
  Deno.test({ name, sanitizeOps: true, sanitizeResources: true, fn });
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
// Heads are read one character per byte, so a test sees the bytes that were sent.
const bytewise = new TextDecoder("latin1");

interface Seen {
  readonly connection: number;
  readonly head: string;
  readonly body: string;
}

/** What the ingest does with one request: answer these bytes (then maybe close), or close. */
type Script = (seen: Seen, index: number) => { answer?: string; close?: boolean };

interface ScriptedIngest extends AsyncDisposable {
  readonly url: string;
  readonly seen: Seen[];
  connections: number;
  /** Close every connection from the ingest's side, at once (an idle timeout). */
  dropConnections(): void;
}

function startScriptedIngest(script: Script): ScriptedIngest {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  const handlers: Promise<void>[] = [];
  const ingest: ScriptedIngest = {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/api/1/envelope/`,
    seen: [],
    connections: 0,
    dropConnections() {
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
    },
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of open) conn.close();
      await Promise.allSettled(handlers);
    },
  };
  (async () => {
    for await (const conn of listener) {
      open.add(conn);
      handlers.push(serve(conn, ++ingest.connections).finally(() => open.delete(conn)));
    }
  })().catch(() => {});

  async function serve(conn: Deno.Conn, connection: number) {
    let buffered: Uint8Array = new Uint8Array(0);
    const buf = new Uint8Array(65536);
    try {
      for (;;) {
        let text = bytewise.decode(buffered);
        while (!text.includes("\r\n\r\n")) {
          const n = await conn.read(buf);
          if (n === null) return conn.close();
          buffered = concat(buffered, buf.subarray(0, n));
          text = bytewise.decode(buffered);
        }
        const headEnd = text.indexOf("\r\n\r\n") + 4;
        const head = text.slice(0, headEnd);
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        while (buffered.byteLength < headEnd + length) {
          const n = await conn.read(buf);
          if (n === null) return conn.close();
          buffered = concat(buffered, buf.subarray(0, n));
        }
        const body = decoder.decode(buffered.subarray(headEnd, headEnd + length));
        buffered = buffered.slice(headEnd + length);
        const seen = { connection, head, body };
        ingest.seen.push(seen);
        const { answer, close } = script(seen, ingest.seen.length - 1);
        if (answer !== undefined) await conn.write(encoder.encode(answer));
        if (close) return conn.close();
      }
    } catch {
      try {
        conn.close();
      } catch { /* closed by dispose */ }
    }
  }
  return ingest;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 8\r\n\r\n{"id":1}';

async function post(client: IngestClient, url: string, body: string | ReadableStream) {
  const response = await client.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-sentry-envelope", "user-agent": "t" },
    body: typeof body === "string" ? encoder.encode(body) : body,
    redirect: "manual",
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

async function withClient(fn: (client: IngestClient) => Promise<void>) {
  const client = createIngestClient({ maxResponseBytes: 1024 });
  try {
    await fn(client);
  } finally {
    client.close();
  }
}

test("keep-alive: sequential requests share one connection", async () => {
  await using ingest = startScriptedIngest(() => ({ answer: OK }));
  await withClient(async (client) => {
    for (let i = 0; i < 5; i++) {
      const answer = await post(client, ingest.url, `envelope ${i}`);
      assert.equal(answer.status, 200);
      assert.equal(answer.text, '{"id":1}');
    }
    assert.equal(ingest.connections, 1);
    assert.deepEqual(client.stats, { opened: 1, reused: 4 });
    assert.deepEqual(ingest.seen.map((s) => s.body), [0, 1, 2, 3, 4].map((i) => `envelope ${i}`));
    const head = ingest.seen[0].head;
    assert.match(head, /^POST \/api\/1\/envelope\/ HTTP\/1\.1\r\n/);
    assert.match(head, /\r\nhost: 127\.0\.0\.1:\d+\r\n/);
    assert.match(head, /\r\ncontent-length: 10\r\n/);
    assert.match(head, /\r\nuser-agent: t\r\n/);
  });
});

test("header values go on one byte per character, as fetch sends them", async () => {
  await using ingest = startScriptedIngest(() => ({ answer: OK }));
  await withClient(async (client) => {
    // Deno hands a request header's byte 0xE9 over as "é" (U+00E9); the ingest must get 0xE9.
    for (const body of ["whole", ReadableStream.from([encoder.encode("streamed")])]) {
      const response = await client.fetch(ingest.url, {
        method: "POST",
        headers: { "user-agent": "caf\u00e9/1.0 \u00ff" },
        body: typeof body === "string" ? encoder.encode(body) : body,
        redirect: "manual",
      });
      assert.equal(response.status, 200);
      await response.body?.cancel();
    }
    // This ingest reads no chunked bodies: the streamed one's chunks are left as a third "request".
    const [whole, streamed] = ingest.seen;
    assert.match(streamed.head, /\r\ntransfer-encoding: chunked\r\n/);
    for (const seen of [whole, streamed]) {
      assert.match(
        seen.head,
        /\r\nuser-agent: caf\u00e9\/1\.0 \u00ff\r\n/,
        "0xE9 and 0xFF, not UTF-8",
      );
    }
  });
});

test("a connection the ingest closes between requests is not used again", async () => {
  await using ingest = startScriptedIngest(() => ({ answer: OK, close: true }));
  await withClient(async (client) => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await post(client, ingest.url, `e${i}`)).status, 200);
      // Let the client see the close (its idle read ends) before the next request.
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(ingest.connections, 3);
    assert.deepEqual(ingest.seen.map((s) => s.body), ["e0", "e1", "e2"]);
  });
});

test("a connection whose close the client has just been told of is not used for the next request", async () => {
  await using ingest = startScriptedIngest(() => ({ answer: OK }));
  // The trigger opens before or after the connection, so the news comes in either order.
  for (const triggerFirst of [true, false]) {
    using early = triggerFirst ? await sameTurn() : undefined;
    await withClient(async (client) => {
      assert.equal((await post(client, ingest.url, "first")).status, 200);
      using turn = early ?? await sameTurn();
      // Idle for longer than a connection that is merely between batches.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_IDLE_MS + 20));
      // The ingest's close and the next request come in one turn.
      const answer = await turn.run(
        () => ingest.dropConnections(),
        () => post(client, ingest.url, "second"),
      );
      assert.equal(answer.status, 200);
    });
  }
  assert.deepEqual(ingest.seen.map((s) => s.body), ["first", "second", "first", "second"]);
  assert.equal(ingest.connections, 4);
});

test("close() with a request in flight: its connection is closed when it ends, not kept", async () => {
  // An ingest that answers after a while, then reports whether the client closed the connection.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const sawEof = (async () => {
    const conn = await listener.accept();
    const buf = new Uint8Array(65536);
    await conn.read(buf);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await conn.write(encoder.encode(OK));
    // Bounded: a connection kept open would leave this read waiting for good.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const eof = await Promise.race([
      conn.read(buf).then((n) => n === null, () => false),
      new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), 2000)),
    ]);
    clearTimeout(timer);
    conn.close();
    return eof;
  })();
  const client = createIngestClient();
  const url = `http://127.0.0.1:${listener.addr.port}/api/1/envelope/`;
  const answer = post(client, url, "in flight");
  await new Promise((resolve) => setTimeout(resolve, 10));
  client.close();
  assert.equal((await answer).status, 200);
  assert.equal(await sawEof, true);
  listener.close();
});

test("Connection: close in the answer means a new connection next time", async () => {
  const answer = "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok";
  await using ingest = startScriptedIngest(() => ({ answer }));
  await withClient(async (client) => {
    assert.equal((await post(client, ingest.url, "a")).text, "ok");
    assert.equal((await post(client, ingest.url, "b")).text, "ok");
    assert.equal(ingest.connections, 2);
    assert.equal(client.stats.reused, 0);
  });
});

test("a request the ingest took but never answered fails and is not sent again", async () => {
  await using ingest = startScriptedIngest((_, index) =>
    index === 0 ? { answer: OK } : { close: true }
  );
  await withClient(async (client) => {
    assert.equal((await post(client, ingest.url, "first")).status, 200);
    await assert.rejects(post(client, ingest.url, "second"), TypeError);
    assert.deepEqual(ingest.seen.map((s) => s.body), ["first", "second"]);
  });
});

test("chunked and Content-Length answers are both read whole", async () => {
  const answers = [
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: application/json\r\n\r\n3\r\n{"i\r\n5\r\nd":2}\r\n0\r\n\r\n',
    OK,
  ];
  await using ingest = startScriptedIngest((_, i) => ({ answer: answers[i] }));
  await withClient(async (client) => {
    assert.equal((await post(client, ingest.url, "a")).text, '{"id":2}');
    assert.equal((await post(client, ingest.url, "b")).text, '{"id":1}');
    assert.equal(ingest.connections, 1);
  });
});

test("an answer over the cap is cut at cap + 1 bytes and its connection dropped", async () => {
  const big = "x".repeat(5000);
  await using ingest = startScriptedIngest(() => ({
    answer: `HTTP/1.1 200 OK\r\ncontent-length: ${big.length}\r\n\r\n${big}`,
  }));
  await withClient(async (client) => {
    assert.equal((await post(client, ingest.url, "a")).text.length, 1025);
    await post(client, ingest.url, "b");
    assert.equal(ingest.connections, 2);
  });
});

test("a redirect is returned as it is, never followed", async () => {
  await using ingest = startScriptedIngest(() => ({
    answer: "HTTP/1.1 302 Found\r\nlocation: http://127.0.0.1:1/x\r\ncontent-length: 0\r\n\r\n",
  }));
  await withClient(async (client) => {
    const answer = await post(client, ingest.url, "a");
    assert.equal(answer.status, 302);
    assert.equal(ingest.seen.length, 1);
  });
});

test("a malformed answer is a TypeError, as fetch's network errors are", async () => {
  await using ingest = startScriptedIngest(() => ({ answer: "HTTP/1.1 200 OK\nbad\n\n" }));
  await withClient(async (client) => {
    await assert.rejects(post(client, ingest.url, "a"), TypeError);
  });
});

test("a streamed body goes chunked and arrives whole", async () => {
  await using ingest = startScriptedIngest(() => ({ answer: OK }));
  // The scripted ingest reads Content-Length bodies only: check the chunked framing by hand.
  await withClient(async (client) => {
    const parts = ["abc", "", "defgh"];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const part = parts.shift();
        if (part === undefined) controller.close();
        else controller.enqueue(encoder.encode(part));
      },
    });
    const sent = client.fetch(ingest.url, {
      method: "POST",
      headers: {},
      body: stream,
      redirect: "manual",
      duplex: "half",
    } as RequestInit);
    // The scripted ingest answers after the head (no Content-Length means an empty body), so
    // the answer may come before the upload ends: the connection is then not reused.
    const response = await sent;
    await response.body?.cancel();
    assert.match(ingest.seen[0].head, /\r\ntransfer-encoding: chunked\r\n/);
  });
});

test("an unreachable ingest is a TypeError; an aborted request rejects with the reason", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  await withClient(async (client) => {
    await assert.rejects(post(client, `http://127.0.0.1:${port}/api/1/envelope/`, "a"), TypeError);
  });
  await using ingest = startScriptedIngest(() => ({})); // never answers
  await withClient(async (client) => {
    const controller = new AbortController();
    const sent = client.fetch(ingest.url, {
      method: "POST",
      headers: {},
      body: encoder.encode("a"),
      redirect: "manual",
      signal: controller.signal,
    });
    while (ingest.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error("stop"));
    await assert.rejects(sent, /stop/);
  });
});

test("header values that could split the request, or are not byte strings, are refused before anything is sent", async () => {
  await using ingest = startScriptedIngest(() => ({ answer: OK }));
  await withClient(async (client) => {
    // A TypeError, as from fetch.
    for (const value of ["a\r\nx-injected: 1", "cup \u2615"]) {
      await assert.rejects(
        client.fetch(ingest.url, {
          method: "POST",
          headers: { "user-agent": value },
          body: encoder.encode("a"),
          redirect: "manual",
        }),
        TypeError,
      );
    }
    assert.equal(ingest.connections, 0);
  });
});

test("an ingest that stops reading partway through a large body: a TypeError, and the connection closed", async () => {
  // Reads a little of the request, then closes: the rest of the write fails (broken pipe or
  // reset) after the first write was taken.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const serving = (async () => {
    for (let i = 0; i < 3; i++) {
      const conn = await listener.accept();
      await conn.read(new Uint8Array(1024));
      conn.close();
    }
  })();
  const client = createIngestClient();
  try {
    const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/api/1/envelope/`;
    for (let i = 0; i < 3; i++) {
      await assert.rejects(
        client.fetch(url, {
          method: "POST",
          headers: { "content-type": "application/x-sentry-envelope" },
          body: new Uint8Array(4 * 1024 * 1024),
          redirect: "manual",
        }),
        TypeError,
      );
    }
    await serving;
    // The test's resource sanitizer fails it if a connection of the three is still open.
  } finally {
    client.close();
    listener.close();
  }
});

test("a pipeline asked for after close() sends, and keeps no connection open", async () => {
  await using ingest = startScriptedIngest(() => ({ answer: OK }));
  const client = createIngestClient();
  client.close();
  const pipeline = client.pipeline(ingest.url, { resend: false });
  const headers = { "content-type": "application/x-sentry-envelope" };
  for (const body of ["late", "later"]) {
    assert.equal((await pipeline.send(encoder.encode(body), headers)).status, 200);
  }
  assert.deepEqual(ingest.seen.map((s) => s.body), ["late", "later"]);
  // Each batch's connection closed after it, as close() leaves the client's others.
  assert.equal(ingest.connections, 2);
});
