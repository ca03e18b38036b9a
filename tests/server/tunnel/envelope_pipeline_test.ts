import assert from "node:assert/strict";
import type { Envelope } from "@sentry/core";
import { EnvelopePipeline, NotPipelined } from "../../../server/tunnel/envelope_pipeline.ts";
import { envelopeTransport } from "../../../server/monitoring/envelope_transport.ts";
import { createIngestClient } from "../../../server/tunnel/ingest_client.ts";
import { AbortSwitch } from "../../../server/tunnel/abort_switch.ts";
import { sameTurn } from "../../support/same_turn.ts";
import { SETTLE_IDLE_MS } from "../../../server/tunnel/connect.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const OK = (body: string, extra = "") =>
  `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

/**
 * What the raw ingest does with one request: an answer to write, an answer after which it
 * closes the connection without saying so, or close / hang without answering.
 */
type Answer = string | { readonly thenClose: string } | "close" | "hang";

/**
 * A raw HTTP/1.1 ingest on 127.0.0.1 that reads pipelined requests (Content-Length framing)
 * and answers those it read together in one write, as hyper does. `answer` gets each request's
 * body, its index on its connection and the connection's index.
 */
function rawIngest(
  answer: (body: string, index: number, connection: number) => Answer | Promise<Answer>,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received: { body: string; connection: number }[] = [];
  const conns = new Set<Deno.Conn>();
  let connections = 0;
  const serveOne = async (conn: Deno.Conn, connection: number) => {
    let pending = new Uint8Array(0);
    let index = 0;
    const buffer = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await conn.read(buffer);
        if (n === null) return;
        const joined = new Uint8Array(pending.length + n);
        joined.set(pending);
        joined.set(buffer.subarray(0, n), pending.length);
        pending = joined;
        let out = "";
        for (;;) {
          const text = decoder.decode(pending);
          const end = text.indexOf("\r\n\r\n");
          if (end < 0) break;
          const length = Number(/content-length: (\d+)/i.exec(text.slice(0, end))?.[1] ?? 0);
          if (pending.length < end + 4 + length) break;
          const body = decoder.decode(pending.subarray(end + 4, end + 4 + length));
          pending = pending.slice(end + 4 + length);
          const reply = await answer(body, index++, connection);
          if (reply === "hang") return await new Promise(() => {});
          if (reply === "close") {
            if (out !== "") await conn.write(encoder.encode(out));
            return;
          }
          received.push({ body, connection });
          if (typeof reply === "object") {
            await conn.write(encoder.encode(out + reply.thenClose));
            return;
          }
          out += reply;
          if (/connection: close/i.test(reply)) {
            await conn.write(encoder.encode(out));
            return;
          }
        }
        if (out !== "") await conn.write(encoder.encode(out));
      }
    } catch {
      // The client went away.
    } finally {
      conns.delete(conn);
      try {
        conn.close();
      } catch { /* closed */ }
    }
  };
  const accepting = (async () => {
    try {
      for await (const conn of listener) {
        conns.add(conn);
        serveOne(conn, connections++);
      }
    } catch { /* closed */ }
  })();
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/api/1/envelope/?sentry_key=k`,
    received,
    connections: () => connections,
    /** Close every connection from the ingest's side, at once (an idle timeout). */
    dropConnections() {
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
    },
    async close() {
      listener.close();
      for (const conn of conns) {
        try {
          conn.close();
        } catch { /* closed */ }
      }
      await accepting;
    },
  };
}

const envelope = (id: string) =>
  [{ event_id: id }, [[{ type: "transaction" }, { id }]]] as unknown as Envelope;
const ids = (n: number, prefix = "e") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const send = (pipeline: EnvelopePipeline, id: string) =>
  pipeline.send(encoder.encode(id), { "content-type": "application/x-sentry-envelope" });
const text = (answer: { body: Uint8Array }) => decoder.decode(answer.body);

Deno.test("a burst sent in one turn goes out in one write, and each answer reaches its own sender", async () => {
  const ingest = rawIngest((body) => OK(`answer to ${body}`));
  const pipeline = new EnvelopePipeline(ingest.url);
  try {
    const burst = ids(20);
    const answers = await Promise.all(burst.map((id) => send(pipeline, id)));
    assert.deepEqual(answers.map(text), burst.map((id) => `answer to ${id}`));
    assert.deepEqual(ingest.received.map((r) => r.body), burst);
    // Sent in one turn: one write, with no timer to wait for.
    assert.deepEqual(pipeline.stats, { opened: 1, batches: 1, retried: 0 });
    // One sent later, while the connection is idle, goes at once.
    assert.equal(text(await send(pipeline, "later")), "answer to later");
    assert.deepEqual(pipeline.stats, { opened: 1, batches: 2, retried: 0 });
    assert.equal(ingest.connections(), 1);
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("an HTTP/1.0 ingest that keeps the connection: each envelope read once, none sent again", async () => {
  const ingest = rawIngest((body) =>
    `HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: ${body.length}\r\n\r\n${body}`
  );
  const pipeline = new EnvelopePipeline(ingest.url, { resend: false });
  try {
    const burst = ids(4);
    const answers = await Promise.all(burst.map((id) => send(pipeline, id)));
    assert.deepEqual(answers.map(text), burst);
    assert.deepEqual(ingest.received.map((r) => r.body), burst);
    assert.deepEqual(pipeline.stats, { opened: 1, batches: 1, retried: 0 });
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("Connection: close partway: the unanswered go again on a new connection, each once", async () => {
  const ingest = rawIngest((body, index, connection) =>
    connection === 0 && index === 2 ? OK(body, "connection: close\r\n") : OK(body)
  );
  const pipeline = new EnvelopePipeline(ingest.url);
  try {
    await send(pipeline, "first");
    const batch = ids(5);
    const answers = await Promise.all(batch.map((id) => send(pipeline, id)));
    assert.deepEqual(answers.map(text), batch);
    // e0 and e1 answered on the first connection (e1 with close); e2-e4 never read there.
    const bodies = ingest.received.map((r) => r.body);
    assert.deepEqual(bodies, ["first", ...batch]);
    assert.deepEqual(ingest.received.map((r) => r.connection), [0, 0, 0, 1, 1, 1]);
    // After a close the next batch carries one envelope; the rest follow together.
    assert.deepEqual(pipeline.stats, { opened: 2, batches: 4, retried: 3 });
    assert.equal(pipeline.pipelining, true);
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("resend off: a connection that ends without Connection: close is no promise the rest went unread", async () => {
  // HTTP/1.1 with a body ended by the close, and HTTP/1.0 without keep-alive: the ingest may
  // have read (and kept) the requests behind the answer, so the tunnel sends none of them twice.
  for (
    const answer of [
      (body: string) => `HTTP/1.1 200 OK\r\n\r\n${body}`,
      (body: string) => `HTTP/1.0 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    ]
  ) {
    const ingest = rawIngest((body, index, connection) =>
      connection === 0 && index === 1 ? { thenClose: answer(body) } : OK(body)
    );
    const pipeline = new EnvelopePipeline(ingest.url, { resend: false });
    try {
      await send(pipeline, "first");
      const settled = await Promise.allSettled(ids(4).map((id) => send(pipeline, id)));
      assert.equal(settled[0].status === "fulfilled" && text(settled[0].value), "e0");
      for (const outcome of settled.slice(1)) {
        assert.ok(outcome.status === "rejected" && outcome.reason instanceof TypeError);
      }
      assert.deepEqual(ingest.received.map((r) => r.body), ["first", "e0"]);
      assert.equal(pipeline.stats.retried, 0);
    } finally {
      pipeline.close();
      await ingest.close();
    }
  }
});

Deno.test("an ingest that stops answering partway is not pipelined to again; every envelope arrives", async () => {
  // Answers the first request of each connection, then closes without a word.
  const ingest = rawIngest((body, index) => index === 0 ? OK(body) : "close");
  const client = createIngestClient();
  const transport = envelopeTransport(client)({
    url: ingest.url,
    recordDroppedEvent: () => {},
  });
  try {
    await transport.send(envelope("first"));
    const batch = ids(6);
    const results = await Promise.all(
      batch.map((id) => transport.send(envelope(id))),
    );
    assert.ok(results.every((result) => result.statusCode === 200), JSON.stringify(results));
    for (const id of batch) {
      const copies = ingest.received.filter((r) => r.body.includes(`"id":"${id}"`)).length;
      assert.equal(copies, 1, `${id} arrived ${copies} times`);
    }
  } finally {
    client.close();
    await transport.flush(1000);
    await ingest.close();
  }
});

Deno.test("the SDK's envelopes one at a time (pipelining off) still end within the send timeout", async () => {
  // The first connection stops answering partway (pipelining goes off); every later one is
  // accepted and never answered.
  const ingest = rawIngest((body, index, connection) =>
    connection > 0 ? "hang" : index === 0 ? OK(body) : "close"
  );
  const client = createIngestClient();
  const transport = envelopeTransport(client, { timeoutMs: 200 })({
    url: ingest.url,
    recordDroppedEvent: () => {},
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await transport.send(envelope("first"));
    const sends = Promise.allSettled(ids(2).map((id) => transport.send(envelope(id))));
    const stuck = new Promise<"stuck">((resolve) =>
      timer = setTimeout(() => resolve("stuck"), 5_000)
    );
    const outcome = await Promise.race([sends, stuck]);
    assert.notEqual(outcome, "stuck", "a send still waited after 5 s");
    assert.equal(ingest.connections() > 1, true, "the envelopes went one at a time");
  } finally {
    clearTimeout(timer);
    client.close();
    await transport.flush(1000);
    await ingest.close();
  }
});

Deno.test("NotPipelined: the pipeline tells its caller, and says so from then on", async () => {
  const ingest = rawIngest((body, index) => index === 0 ? OK(body) : "close");
  const pipeline = new EnvelopePipeline(ingest.url);
  try {
    await send(pipeline, "first");
    const settled = await Promise.allSettled(ids(3).map((id) => send(pipeline, id)));
    assert.equal(settled[0].status, "fulfilled");
    for (const result of settled.slice(1)) {
      assert.equal(result.status, "rejected");
      assert.ok((result as PromiseRejectedResult).reason instanceof NotPipelined);
    }
    assert.equal(pipeline.pipelining, false);
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("an idle connection the ingest closed is not used again: the next envelope goes once, on a new one", async () => {
  // Each connection is closed right after its first answer, without `Connection: close`, as
  // an idle timeout would close it: the client only finds out when it next sends.
  const ingest = rawIngest((body) => ({ thenClose: OK(body) }));
  const pipeline = new EnvelopePipeline(ingest.url);
  try {
    assert.equal(text(await send(pipeline, "one")), "one");
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(text(await send(pipeline, "two")), "two");
    assert.deepEqual(ingest.received.map((r) => r.body), ["one", "two"]);
    // The read kept pending on the idle connection saw it close: nothing was sent into it.
    assert.deepEqual(pipeline.stats, { opened: 2, batches: 2, retried: 0 });
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("a batch never goes out on a connection whose close the server has just been told of", async () => {
  // The ingest's close and the batch come in one turn: the batch must not take the connection
  // over before the idle read's handler has dropped it (resend is off, as for the tunnel). The
  // trigger opens before or after the connection, so the news comes in either order.
  const ingest = rawIngest((body) => OK(body));
  try {
    for (const n of [1, 64]) {
      for (const triggerFirst of [true, false]) {
        using early = triggerFirst ? await sameTurn() : undefined;
        const pipeline = new EnvelopePipeline(ingest.url, { resend: false });
        try {
          assert.equal(text(await send(pipeline, "idle")), "idle");
          using turn = early ?? await sameTurn();
          // Idle for longer than a connection that is merely between batches.
          await new Promise((resolve) => setTimeout(resolve, SETTLE_IDLE_MS + 20));
          const batch = ids(n, `b${n}${triggerFirst}-`);
          const answers = await turn.run(
            () => ingest.dropConnections(),
            () => Promise.allSettled(batch.map((id) => send(pipeline, id))),
          );
          assert.deepEqual(
            answers.map((a) => a.status === "fulfilled" ? text(a.value) : String(a.reason)),
            batch,
          );
        } finally {
          pipeline.close();
        }
      }
    }
    assert.equal(ingest.received.length, 4 + 2 + 128);
  } finally {
    await ingest.close();
  }
});

Deno.test("an ingest that never answers: failed after one retry, each attempt bounded by the timeout", async () => {
  const ingest = rawIngest(() => "hang");
  const pipeline = new EnvelopePipeline(ingest.url, { timeoutMs: 100 });
  try {
    await assert.rejects(send(pipeline, "lost"), TypeError);
    assert.deepEqual(pipeline.stats, { opened: 2, batches: 2, retried: 1 });
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("no ingest listening: a TypeError, not a hang", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const pipeline = new EnvelopePipeline(`http://127.0.0.1:${port}/api/1/envelope/`);
  await assert.rejects(send(pipeline, "nowhere"), TypeError);
  assert.equal(pipeline.stats.opened, 0);
});

Deno.test("resend off (the tunnel): an envelope whose connection broke fails once, never sent twice", async () => {
  const ingest = rawIngest(() => "hang");
  const pipeline = new EnvelopePipeline(ingest.url, { timeoutMs: 100, resend: false });
  try {
    await assert.rejects(send(pipeline, "once"), TypeError);
    assert.deepEqual(pipeline.stats, { opened: 1, batches: 1, retried: 0 });
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("a connection opened for envelopes all given up on is idle like any other: kept while it lives, dropped once closed", async () => {
  const headers = { "content-type": "application/x-sentry-envelope" };
  // Given up on while its connection opens: the send's batch is formed a microtask after the
  // send, and the connect needs the event loop.
  const abandonedDuringConnect = async (pipeline: EnvelopePipeline) => {
    const stop = new AbortSwitch();
    const gone = pipeline.send(encoder.encode("gone"), headers, stop);
    await null;
    stop.abort(new Error("client went away"));
    await assert.rejects(gone, /client went away/);
  };
  const waitForConnections = async (ingest: ReturnType<typeof rawIngest>, n: number) => {
    while (ingest.connections() < n) await new Promise((resolve) => setTimeout(resolve, 5));
  };
  for (const ingestCloses of [false, true]) {
    const ingest = rawIngest((body) => OK(body));
    // Resend off, as in the tunnel: an envelope written into a dead connection is lost (502).
    const pipeline = new EnvelopePipeline(ingest.url, { resend: false });
    try {
      await abandonedDuringConnect(pipeline);
      await waitForConnections(ingest, 1);
      if (ingestCloses) {
        ingest.dropConnections();
        await new Promise((resolve) => setTimeout(resolve, SETTLE_IDLE_MS + 20));
      }
      assert.equal(text(await send(pipeline, "next")), "next", `ingest closes: ${ingestCloses}`);
      assert.deepEqual(ingest.received.map((r) => r.body), ["next"]);
      // Alive, it carries the next batch; closed, its watch saw it go.
      assert.equal(pipeline.stats.opened, ingestCloses ? 2 : 1, `ingest closes: ${ingestCloses}`);
    } finally {
      pipeline.close();
      await ingest.close();
    }
  }
});

Deno.test("an aborted send stops waiting: unsent it is never sent, sent its late answer is dropped", async () => {
  const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const ingest = rawIngest(async (body) => {
    await later(body === "slow" || body === "abandoned" ? 100 : 0);
    return OK(`answer to ${body}`);
  });
  const pipeline = new EnvelopePipeline(ingest.url);
  const headers = { "content-type": "application/x-sentry-envelope" };
  try {
    // Queued behind a slow one, then aborted: it never leaves.
    const slow = send(pipeline, "slow");
    const queued = new AbortSwitch();
    const unsent = pipeline.send(encoder.encode("unsent"), headers, queued);
    queued.abort(new Error("gave up"));
    await assert.rejects(unsent, /gave up/);
    assert.equal(text(await slow), "answer to slow");
    // Written, then aborted: the caller is let go; its answer is read and dropped.
    const written = new AbortSwitch();
    const abandoned = pipeline.send(encoder.encode("abandoned"), headers, written);
    await later(20);
    written.abort(new Error("timed out"));
    await assert.rejects(abandoned, /timed out/);
    assert.equal(text(await send(pipeline, "next")), "answer to next");
    assert.deepEqual(ingest.received.map((r) => r.body), ["slow", "abandoned", "next"]);
    assert.equal(pipeline.stats.opened, 1);
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("an ingest that closes after every answer: each envelope once, one write each, not a resend of the rest each time", async () => {
  const ingest = rawIngest((body) => OK(body, "connection: close\r\n"));
  const pipeline = new EnvelopePipeline(ingest.url);
  try {
    await send(pipeline, "first");
    const batch = ids(10);
    const answers = await Promise.all(batch.map((id) => send(pipeline, id)));
    assert.deepEqual(answers.map(text), batch);
    assert.deepEqual(ingest.received.map((r) => r.body), ["first", ...batch]);
    // One batch of ten (one answered), then one envelope per connection: linear, not 55 writes.
    assert.equal(pipeline.stats.opened, 11);
    assert.equal(pipeline.stats.batches, 11);
    assert.equal(pipeline.stats.retried, 9);
    assert.equal(pipeline.pipelining, true);
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("a clean close partway without a word: the written are told so, and later envelopes are not written", async () => {
  let resets = 0;
  const ingest = rawIngest((body, index, connection) => {
    if (connection === 0 && index === 2 && resets++ === 0) return "close";
    return OK(body);
  });
  const pipeline = new EnvelopePipeline(ingest.url, { resend: true });
  try {
    await send(pipeline, "first");
    const settled = await Promise.allSettled(ids(4).map((id) => send(pipeline, id)));
    // e0 answered; the ingest then closed without a word: not pipelined to again.
    assert.equal(settled[0].status, "fulfilled");
    assert.ok(settled.slice(1).every((r) => r.status === "rejected"));
    const written = settled.slice(1).map((r) =>
      ((r as PromiseRejectedResult).reason as NotPipelined).written
    );
    assert.deepEqual(written, [true, true, true]);
    assert.equal(pipeline.pipelining, false);
    // From then on it says so at once, without writing.
    const later = await send(pipeline, "later").catch((error) => error);
    assert.ok(later instanceof NotPipelined && !later.written);
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("an answer cut at the size cap: the connection is not used again", async () => {
  const ingest = rawIngest((body) => OK(body === "big" ? "x".repeat(100) : body));
  const pipeline = new EnvelopePipeline(ingest.url, { maxResponseBytes: 10 });
  try {
    assert.equal((await send(pipeline, "big")).body.byteLength, 11);
    assert.equal(text(await send(pipeline, "small")), "small");
    assert.equal(pipeline.stats.opened, 2);
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("a batch goes out byte-exact, a head with bytes over 0x7f included (one byte each, as fetch)", async () => {
  // Reads requests off the wire by bytes (not text) and answers each in turn.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const requests: Uint8Array[] = [];
  const serving = (async () => {
    const conn = await listener.accept();
    let wire = new Uint8Array(0);
    const buffer = new Uint8Array(64 * 1024);
    try {
      while (requests.length < 2) {
        const n = await conn.read(buffer);
        if (n === null) break;
        const joined = new Uint8Array(wire.length + n);
        joined.set(wire);
        joined.set(buffer.subarray(0, n), wire.length);
        wire = joined;
        for (;;) {
          const end = wire.findIndex((_, i) =>
            wire[i] === 13 && wire[i + 1] === 10 && wire[i + 2] === 13 && wire[i + 3] === 10
          );
          if (end < 0) break;
          const head = decoder.decode(wire.subarray(0, end));
          const length = Number(/content-length: (\d+)/.exec(head)![1]);
          if (wire.length < end + 4 + length) break;
          requests.push(wire.slice(0, end + 4 + length));
          wire = wire.slice(end + 4 + length);
          await conn.write(encoder.encode(OK("ok")));
        }
      }
    } finally {
      conn.close();
    }
  })();
  const url = `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/api/1/envelope/`;
  // Sent in one turn, they share a write.
  const pipeline = new EnvelopePipeline(url);
  try {
    const answers = await Promise.all([
      pipeline.send(encoder.encode("première"), { "x-note": "caf\u00e9 \u00ff" }),
      pipeline.send(encoder.encode("second"), { "x-note": "plain" }),
    ]);
    assert.deepEqual(answers.map((a) => a.status), [200, 200]);
    assert.equal(pipeline.stats.batches, 1, "both in one write");
    // One character per byte: 0xE9 and 0xFF on the wire, not UTF-8's pairs.
    const [first, second] = requests.map((bytes) => new TextDecoder("latin1").decode(bytes));
    assert.match(first, /\r\nx-note: caf\u00e9 \u00ff\r\n/);
    const body = encoder.encode("première");
    assert.ok(
      first.endsWith(
        `content-length: ${body.length}\r\n\r\n`.concat(
          ...[...body].map((b) => String.fromCharCode(b)),
        ),
      ),
    );
    assert.ok(second.startsWith("POST /api/1/envelope/ HTTP/1.1\r\n"));
    assert.ok(second.endsWith("\r\n\r\nsecond"));
  } finally {
    pipeline.close();
    listener.close();
    await serving;
  }
});

Deno.test("a body changed after send cannot desync the connection: the length it had is written", async () => {
  const ingest = rawIngest((body) => OK(body));
  const pipeline = new EnvelopePipeline(ingest.url);
  const headers = { "content-type": "application/x-sentry-envelope" };
  try {
    // A view that tracks a resizable buffer: it grows with it, after send() took its length.
    const buffer = new ArrayBuffer(5, { maxByteLength: 256 });
    const body = new Uint8Array(buffer);
    body.set(encoder.encode("hello"));
    const first = pipeline.send(body, headers);
    const smuggled = encoder.encode(
      "POST /smuggled HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n",
    );
    buffer.resize(5 + smuggled.length);
    body.set(smuggled, 5);
    const second = pipeline.send(encoder.encode("next"), headers);
    assert.deepEqual([text(await first), text(await second)], ["hello", "next"]);
    assert.deepEqual(ingest.received.map((r) => r.body), ["hello", "next"]);
  } finally {
    pipeline.close();
    await ingest.close();
  }
});

Deno.test("a header value that is not a byte string is a TypeError, as from fetch; nothing is sent", async () => {
  const ingest = rawIngest((body) => OK(body));
  const pipeline = new EnvelopePipeline(ingest.url);
  try {
    assert.throws(() => pipeline.send(encoder.encode("x"), { "x-note": "cup \u2615" }), TypeError);
    const answer = await pipeline.send(encoder.encode("after"), { "x-note": "plain" });
    assert.equal(answer.status, 200);
    assert.equal(pipeline.stats.batches, 1, "only the valid envelope went out");
  } finally {
    pipeline.close();
    await ingest.close();
  }
});
