import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ApiError,
  createJsonReader,
  MAX_JSON_DEPTH,
  nestedDeeperThan,
} from "../../../server/api/json_body.ts";
import { byteStreamPost } from "../../support/byte_stream.ts";
import { depthOf } from "../../support/json_depth.ts";

const encode = (text: string) => new TextEncoder().encode(text);

Deno.test("nestedDeeperThan: agrees with the parsed value's depth, whatever its strings hold", () => {
  // Strings full of brackets, quotes and backslashes must not count as nesting.
  const tricky = fc.string({ unit: fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", "é") });
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      tricky,
      fc.integer(),
      fc.constant(null),
      fc.array(tie("value"), { maxLength: 3 }),
      fc.dictionary(tricky, tie("value"), { maxKeys: 3 }),
    ),
  })).value;
  fc.assert(
    fc.property(json, fc.integer({ min: 0, max: 6 }), (value, max) => {
      const bytes = encode(JSON.stringify(value));
      assert.equal(nestedDeeperThan(bytes, max), depthOf(value) > max);
    }),
    { numRuns: 500 },
  );
  assert.equal(nestedDeeperThan(encode("[".repeat(8000) + "]".repeat(8000)), 64), true);
});

/** A JSON POST whose body is a byte stream (as Deno.serve's are), sent in `chunks`. */
const post = (chunks: Uint8Array[], headers: Record<string, string> = {}) =>
  byteStreamPost("http://app.example/api/x", chunks, {
    "content-type": "application/json",
    ...headers,
  });

/** A JSON POST whose body never arrives. */
const stalled = () =>
  new Request("http://app.example/api/x", {
    method: "POST",
    body: new ReadableStream({ type: "bytes", pull: () => new Promise(() => {}) }),
    headers: { "content-type": "application/json" },
  });

async function refusal(reading: Promise<unknown>): Promise<ApiError> {
  try {
    await reading;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

Deno.test("ctx.json(): the body as JSON, declared or chunked; each mistake its own status", async () => {
  const read = createJsonReader({ maxBodyBytes: 100_000, clientLimits: false });
  const value = { text: "x".repeat(70_000), list: [1, [2, [3]]] };
  const bytes = encode(JSON.stringify(value));
  const pieces = [bytes.subarray(0, 40_000), bytes.subarray(40_000)];
  assert.deepEqual(await read(post(pieces), "a"), value);
  assert.deepEqual(
    await read(post(pieces, { "content-length": String(bytes.byteLength) }), "a"),
    value,
  );
  // A byte order mark, as some clients send, is not an error.
  assert.deepEqual(await read(post([encode("\ufeff[1]")]), "a"), [1]);
  const deep = (n: number) => encode("[".repeat(n) + "]".repeat(n));
  assert.equal((await read(post([deep(MAX_JSON_DEPTH)]), "a") as unknown[]).length, 1);
  const cases: [Request, number, RegExp][] = [
    [post([deep(MAX_JSON_DEPTH + 1)]), 400, /nested deeper than 64 levels/],
    [post([encode("{")]), 400, /malformed/],
    [post([]), 400, /empty/],
    [post([encode("1")], { "content-type": "text/plain" }), 415, /JSON/],
    [post([encode("1")], { "content-length": "100001" }), 413, /larger than 100000/],
    [post([new Uint8Array(60_000), new Uint8Array(60_000)]), 413, /larger than 100000/],
    [post([encode("[1]")], { "content-length": "9" }), 400, /not received/],
    [post(Array.from({ length: 1000 }, () => encode(" "))), 400, /too small for a real client/],
  ];
  for (const [req, status, reason] of cases) {
    const error = await refusal(read(req, "a"));
    assert.equal(error.status, status, reason.source);
    assert.match(error.message, reason);
  }
});

Deno.test("ctx.json(): no slot within its wait is a 503 with Retry-After; a stalled body a 408", async () => {
  const options = { maxBodyBytes: 1000, slots: 2, waitMs: 20, timeoutMs: 60 };
  // Per-client limits on: client a holds one of the two slots with a body that never comes, so
  // its second body waits in its own line (then 503) while client b's is read at once.
  const shared = createJsonReader({ ...options, clientLimits: true });
  const [held, waiting] = [shared(stalled(), "a"), shared(stalled(), "a")];
  assert.deepEqual(await shared(post([encode("[2]")]), "b"), [2]);
  const busy = await refusal(waiting);
  assert.equal(busy.status, 503);
  assert.equal(busy.headers["retry-after"], "5");
  assert.match(busy.message, /too many request bodies in flight/);
  const timedOut = await refusal(held);
  assert.equal(timedOut.status, 408);
  assert.match(timedOut.message, /not received within 60 ms/);
  // Both slots came back: two bodies of one client... are one at a time with limits on, and
  // two at once without them.
  const open = createJsonReader({ ...options, clientLimits: false });
  const [stuck, second] = [open(stalled(), "a"), open(post([encode("1")]), "a")];
  assert.equal(await second, 1);
  assert.equal((await refusal(stuck)).status, 408);
  assert.deepEqual(
    await Promise.all([shared(post([encode("1")]), "a"), shared(post([encode("2")]), "c")]),
    [1, 2],
  );
});
