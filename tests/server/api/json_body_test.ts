import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ApiError,
  createJsonReader,
  MAX_JSON_DEPTH,
  nestedDeeperThan,
} from "../../../server/api/json_body.ts";
import {
  createBodyBudget,
  MAX_CLIENT_BODIES,
  RETRY_AFTER_SECONDS,
} from "../../../server/http/body_budget.ts";
import { byteStreamPost } from "../../support/byte_stream.ts";
import { depthOf } from "../../support/json_depth.ts";
import { defaultBodies } from "../../support/tunnel_upload.ts";

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
  const read = createJsonReader({ maxBodyBytes: 100_000, bodies: defaultBodies() });
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

Deno.test("ctx.json(): a client past its places is a 503 with Retry-After; a stalled body a 408", async () => {
  // Bodies stalled 100 ms (half the read timeout: the grace) are cut; one client holds 8 places.
  const limits = { readTimeoutMs: 200, minRate: 8192, memoryBytes: 4_000_000 };
  const bodies = createBodyBudget({ ...limits, clientLimits: true });
  const shared = createJsonReader({ maxBodyBytes: 900_000, bodies });
  const held = Array.from({ length: MAX_CLIENT_BODIES }, () => shared(stalled(), "a"));
  const busy = await refusal(shared(post([encode("[1]")]), "a"));
  assert.equal(busy.status, 503);
  assert.equal(busy.headers["retry-after"], String(RETRY_AFTER_SECONDS));
  assert.match(busy.message, /too many request bodies in flight/);
  // Another client is read at once, and so is one that declares more than a client's half.
  assert.deepEqual(await shared(post([encode("[2]")]), "b"), [2]);
  for (const timedOut of await Promise.all(held.map(refusal))) {
    assert.equal(timedOut.status, 408);
    assert.match(timedOut.message, /too slow: nothing for 200 ms, or under 8192 bytes\/s/);
  }
  // Their places came back; a body costing more than a client's half (4 per byte) is refused...
  assert.deepEqual(await shared(post([encode("[3]")]), "a"), [3]);
  const large = post([encode(" ".repeat(600_000) + "4")], { "content-length": "600001" });
  assert.equal((await refusal(shared(large, "a"))).status, 503);
  // ...unless per-client limits are off.
  const open = createJsonReader({
    maxBodyBytes: 900_000,
    bodies: createBodyBudget({ ...limits, clientLimits: false }),
  });
  const again = post([encode(" ".repeat(600_000) + "4")], { "content-length": "600001" });
  assert.equal(await open(again, "a"), 4);
});
