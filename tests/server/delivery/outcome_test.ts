/** What an ingest's answer means (pure): retried, final or done; the rate limits it sets. */
import assert from "node:assert/strict";
import {
  categoriesOf,
  createRateLimitMemory,
  type SendResult,
  verdict,
} from "../../../server/delivery/outcome.ts";

const answer = (status: number, headers: HeadersInit = {}): SendResult => ({
  status,
  headers: new Headers(headers),
});

Deno.test("verdict: no answer and 502/503/504 are retried; 2xx done; 429 and other 4xx final", () => {
  assert.equal(verdict("no-answer"), "retry");
  for (const status of [502, 503, 504]) assert.equal(verdict(answer(status)), "retry", `${status}`);
  for (const status of [200, 202, 204]) assert.equal(verdict(answer(status)), "done", `${status}`);
  for (const status of [0, 302, 400, 403, 413, 429, 500]) {
    assert.equal(verdict(answer(status)), "final", `${status}`);
  }
});

Deno.test("categoriesOf: Sentry's data categories, each once", () => {
  assert.deepEqual(
    categoriesOf(["event", "attachment", "replay_event", "replay_recording", "client_report"]),
    ["error", "attachment", "replay", "internal"],
  );
  assert.deepEqual(categoriesOf(["transaction", "session", "sessions"]), [
    "transaction",
    "session",
  ]);
  assert.deepEqual(categoriesOf(["check_in", "log", "span"]), ["monitor", "log_item", "span"]);
});

Deno.test("a 429 with Retry-After and no limits header holds every category of that key", () => {
  const limits = createRateLimitMemory();
  assert.equal(limits.learn("k", answer(429, { "retry-after": "30" }), 1_000), true);
  assert.equal(limits.blockedFor("k", ["error"], 1_000), 30_000);
  assert.equal(limits.blockedFor("k", [], 11_000), 20_000, "unknown categories: held too");
  assert.equal(limits.blockedFor("other", ["error"], 1_000), 0, "another key is not limited");
  assert.equal(limits.blockedFor("k", ["error"], 31_000), 0, "expired");
  assert.equal(limits.header("k", 11_000), "20::key");
  assert.equal(limits.header("k", 31_000), "");
});

Deno.test("X-Sentry-Rate-Limits: per category, on any status; an envelope is held only if all its categories are", () => {
  const limits = createRateLimitMemory();
  const header = { "x-sentry-rate-limits": "60:transaction;replay:organization:quota, 10::key" };
  assert.equal(limits.learn("k", answer(200, header), 0), true);
  assert.equal(limits.blockedFor("k", ["transaction"], 20_000), 40_000);
  assert.equal(limits.blockedFor("k", ["error"], 20_000), 0, "the all-categories limit expired");
  assert.equal(limits.blockedFor("k", ["error", "transaction"], 20_000), 0);
  assert.equal(limits.blockedFor("k", [], 20_000), 0, "unknown: only an all-categories limit");
  assert.equal(limits.header("k", 20_000), "40:transaction:key,40:replay:key");
  // A client's category never reaches the object's prototype.
  assert.equal(limits.blockedFor("k", ["__proto__"], 0), 10_000);
  assert.equal(limits.blockedFor("k", ["constructor", "toString"], 20_000), 0);
});

Deno.test("answers without a 429 or a limits header set nothing", () => {
  const limits = createRateLimitMemory();
  assert.equal(limits.learn("k", answer(503, { "retry-after": "30" }), 0), false);
  assert.equal(limits.learn("k", "no-answer", 0), false);
  assert.equal(limits.blockedFor("k", ["error"], 0), 0);
});

Deno.test("an empty X-Sentry-Rate-Limits on a 2xx or 4xx sets no limit (review 8)", () => {
  const limits = createRateLimitMemory();
  for (const status of [200, 400]) {
    assert.equal(limits.learn("k", answer(status, { "x-sentry-rate-limits": "" }), 0), false);
  }
  assert.equal(limits.blockedFor("k", ["error"], 0), 0);
});

Deno.test("categoriesOf: item types named like Object's members stay strings (review 11)", () => {
  assert.deepEqual(categoriesOf(["constructor", "toString", "__proto__"]), [
    "constructor",
    "toString",
    "__proto__",
  ]);
});
