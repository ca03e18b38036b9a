import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ByteBuffer,
  contentLength,
  FREE_READS,
  MIN_AVERAGE_READ,
  READS_PER_TURN,
  RequestBody,
} from "../../../server/http/request_body.ts";
import { byteStreamPost } from "../../support/byte_stream.ts";
import { BODY_DEFAULTS, createBodyBudget } from "../../../server/http/body_budget.ts";

/** A POST of `chunks` (as Deno.serve's bodies are, a byte stream), with its length if `declared`. */
const requestOf = (chunks: Uint8Array[], declared: number | null = null) =>
  byteStreamPost(
    "http://app.example/",
    chunks,
    declared === null ? {} : { "content-length": String(declared) },
  );

const sizes = (...lengths: number[]) => lengths.map((n) => new Uint8Array(n).fill(n % 251));

Deno.test("contentLength: a plain number, or one number repeated; anything else is none", () => {
  const length = (value: string) => contentLength(new Headers({ "content-length": value }));
  assert.equal(contentLength(new Headers()), null);
  assert.equal(length("42"), 42);
  assert.equal(length("42, 42"), 42);
  assert.equal(length("61,061"), 61);
  for (const bad of ["42, 43", "-1", "1e3", "0x10", "1234567890123456", "42,"]) {
    assert.equal(length(bad), null, bad);
  }
});

Deno.test("RequestBody: other timers run between every READS_PER_TURN reads of buffered chunks", async () => {
  // Every chunk is already there, so reads resolve as microtasks: only the body's own turns
  // let a timer (and so Deno's sockets) run. Count the reads done within each timer turn.
  const count = 40 * READS_PER_TURN;
  const body = new RequestBody(requestOf(sizes(...Array(count).fill(300))), null, 1e9, 0);
  let turn = 0;
  let reading = true;
  const tick = () => {
    turn++;
    if (reading) setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  const readsPerTurn = new Map<number, number>();
  while (await body.next() !== undefined) {
    readsPerTurn.set(turn, (readsPerTurn.get(turn) ?? 0) + 1);
  }
  reading = false;
  body.release();
  assert.equal(body.reads, count);
  assert.ok(Math.max(...readsPerTurn.values()) <= READS_PER_TURN, [...readsPerTurn].join(" "));
  assert.ok(turn >= count / READS_PER_TURN - 1, `${turn} turns`);
});

Deno.test("RequestBody: pieces under MIN_AVERAGE_READ bytes are refused once FREE_READS are spent", async () => {
  const tiny = new RequestBody(requestOf(sizes(...Array(10_000).fill(1))), null, 1e9, 0);
  const read = async (body: RequestBody) => {
    try {
      while (await body.next() !== undefined);
      return "done";
    } catch (cause) {
      return cause;
    } finally {
      body.release();
    }
  };
  assert.equal(await read(tiny), "fragmented");
  // Refused at the first read past the free ones: the rest is never read.
  assert.equal(tiny.reads, FREE_READS + 1);
  // A body whose pieces keep the average is read to its end, however many there are.
  const fair = sizes(...Array(5_000).fill(MIN_AVERAGE_READ));
  assert.equal(await read(new RequestBody(requestOf(fair), null, 1e9, 0)), "done");
  // Small pieces among large ones pass while the average holds, and fail once it does not.
  const mixed = sizes(64 * 1024, ...Array(400).fill(1));
  const body = new RequestBody(requestOf(mixed), null, 1e9, 0);
  assert.equal(await read(body), "fragmented");
  // The first read at which 64 KiB and the 1-byte reads after it average under the minimum.
  let reads = 1;
  while (64 * 1024 + reads - 1 >= reads * MIN_AVERAGE_READ) reads++;
  assert.equal(body.reads, reads);
});

Deno.test("RequestBody: every chunk is the bytes sent, and holds at most twice its size", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.integer({ min: 1, max: 70_000 }), { minLength: 1, maxLength: 30 }),
      fc.boolean(),
      async (lengths, declare) => {
        const chunks = lengths.map((n, i) => new Uint8Array(n).fill(i % 256));
        const total = lengths.reduce((a, b) => a + b, 0);
        // Large enough pieces: the fragmentation rule is tested above.
        const body = new RequestBody(requestOf(chunks, declare ? total : null), total, 1e9, 0);
        const got = new ByteBuffer();
        for (let chunk = await body.next(); chunk !== undefined; chunk = await body.next()) {
          // A small piece copied out of the read buffer, never a view pinning 64 KiB.
          assert.ok(chunk.buffer.byteLength <= Math.max(2 * chunk.byteLength, 1), "pinned");
          got.append(chunk);
        }
        body.release();
        const sent = new ByteBuffer();
        for (const chunk of chunks) sent.append(chunk);
        assert.deepEqual(got.bytes(), sent.bytes());
      },
    ),
    { numRuns: 40 },
  );
});

Deno.test("RequestBody: the cap counts bytes read; a declared body ends at its length", async () => {
  const over = new RequestBody(requestOf(sizes(600, 600)), null, 1000, 0);
  await over.next();
  await assert.rejects(() => over.next(), (cause) => cause === "too-large");
  over.release();
  const whole = new RequestBody(requestOf(sizes(300, 300), 600), 600, 1000, 1000);
  assert.equal(whole.whole, true);
  assert.equal((await whole.bytes()).byteLength, 600);
  assert.equal(whole.reads, 1, "read by Deno in one go");
  const short = new RequestBody(requestOf(sizes(300), 600), 600, 1000, 0);
  await assert.rejects(() => short.bytes(), (cause) => cause === "client");
  short.release();
});

Deno.test("ByteBuffer: a copy of every piece, in at most twice the bytes, and its max if they fit", () => {
  fc.assert(
    fc.property(
      fc.nat(300_000),
      fc.array(fc.integer({ min: 0, max: 5000 }), { maxLength: 200 }),
      (max, lengths) => {
        const buffer = new ByteBuffer(max);
        let total = 0;
        for (const n of lengths) {
          const piece = new Uint8Array(new ArrayBuffer(n + 7), 3, n).fill(n % 256);
          buffer.append(piece);
          piece.fill(0); // the caller may reuse its piece at once
          total += n;
          assert.equal(buffer.length, total);
          const size = buffer.bytes().buffer.byteLength;
          assert.ok(size <= 2 * total && (size <= max || size === total));
        }
        const expected = lengths.flatMap((n) => Array(n).fill(n % 256));
        assert.deepEqual([...buffer.bytes()], expected);
      },
    ),
    { numRuns: 200 },
  );
});

/** A POST whose body sends `count` chunks of `size` bytes, one every `everyMs`, then stalls. */
function paced(count: number, size: number, everyMs: number, end = true): Request {
  let sent = 0;
  const body = new ReadableStream({
    type: "bytes",
    async pull(controller) {
      if (sent === count && !end) return new Promise(() => {});
      await new Promise((resolve) => setTimeout(resolve, everyMs));
      if (sent++ < count) return controller.enqueue(new Uint8Array(size));
      controller.close();
      controller.byobRequest?.respond(0);
    },
  });
  return new Request("http://app.example/", { method: "POST", body });
}

Deno.test("RequestBody: its pace is checked about once per read timeout, not once per read", async () => {
  const budget = createBodyBudget({ ...BODY_DEFAULTS, readTimeoutMs: 2_000, clientLimits: true });
  // Counted as the timers it sets past 100 ms (its turns wait 0 ms, the paced source 2 ms).
  let checks = 0;
  const setTimer = globalThis.setTimeout;
  globalThis.setTimeout = ((run: () => void, ms?: number) => {
    if (ms! > 100) checks++;
    return setTimer(run, ms);
  }) as typeof setTimeout;
  try {
    const body = new RequestBody(paced(200, 2048, 2), null, 1e9, 0, budget, "a");
    assert.equal((await body.bytes()).byteLength, 200 * 2048);
    body.release();
    assert.equal(body.reads, 200);
  } finally {
    globalThis.setTimeout = setTimer;
  }
  // Once when it began; then once per ~2 s it took (on a machine slowed to 1 s a read, 100 times).
  assert.ok(checks <= 1 + 1 + 200 / 2, `${checks} checks`);
  assert.ok(checks < 10, `${checks} checks`);
});

Deno.test("RequestBody: a body that stops arriving is stopped as slow, and its place is freed", async () => {
  const budget = createBodyBudget({ ...BODY_DEFAULTS, readTimeoutMs: 100, clientLimits: true });
  const body = new RequestBody(paced(3, 2048, 1, false), null, 1e9, 0, budget, "a");
  await assert.rejects(() => body.bytes(), (cause) => cause === "timeout");
  body.release();
  // Its client's 8 places are all free again.
  const again = Array.from(
    { length: 8 },
    () => budget.enter("a", { stop() {}, due: () => Infinity }),
  );
  assert.ok(again.every((place) => place !== undefined));
  again.forEach((place) => budget.leave(place!));
});
