import assert from "node:assert/strict";
import { TokenBucket, withinBudget } from "../../../server/monitoring/trace_budget.ts";

Deno.test("TokenBucket: starts full, then refills at its rate and never beyond its burst", () => {
  const bucket = new TokenBucket({ perSecond: 10, burst: 10 }, 0);
  let taken = 0;
  for (let i = 0; i < 20; i++) if (bucket.take(0)) taken++;
  assert.equal(taken, 10, "the burst, all at once");
  assert.equal(bucket.take(50), false, "half a token after 50 ms");
  assert.equal(bucket.take(100), true, "one token per 100 ms");
  assert.equal(bucket.take(100), false);
  taken = 0;
  for (let i = 0; i < 20; i++) if (bucket.take(60_000)) taken++;
  assert.equal(taken, 10, "a long pause refills to the burst only");
});

Deno.test("TokenBucket: 20 requests per second against a budget of 10 per second", () => {
  const bucket = new TokenBucket({ perSecond: 10, burst: 10 }, 0);
  let taken = 0;
  // Ten seconds at one request every 50 ms: the burst, then 10 per second.
  for (let t = 0; t < 10_000; t += 50) if (bucket.take(t)) taken++;
  assert.ok(taken >= 100 && taken <= 110, `took ${taken}`);
});

Deno.test("TokenBucket: a clock that steps back mints nothing", () => {
  const bucket = new TokenBucket({ perSecond: 1, burst: 1 }, 10_000);
  assert.equal(bucket.take(10_000), true);
  assert.equal(bucket.take(0), false);
  assert.equal(bucket.take(10_500), false, "time lost going back is not counted twice");
  assert.equal(bucket.take(11_000), true);
});

Deno.test("TokenBucket: a zero budget never honours anything", () => {
  const bucket = new TokenBucket({ perSecond: 0, burst: 0 }, 0);
  assert.equal(bucket.take(0), false);
  assert.equal(bucket.take(1e12), false);
});

Deno.test("withinBudget: a sampled parent keeps its flag only while the budget lasts", () => {
  const id = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7";
  let tokens = 1;
  const take = () => tokens-- > 0;
  assert.equal(withinBudget(undefined, take), undefined);
  assert.equal(withinBudget(`${id}-0`, take), `${id}-0`, "a parent's 'no' costs nothing");
  assert.equal(withinBudget(id, take), id, "no decision: the server's rate");
  assert.equal(tokens, 1);
  assert.equal(withinBudget(`${id}-1`, take), `${id}-1`, "a parent's 'yes' within the budget");
  assert.equal(withinBudget(` ${id}-1\t`, take), id, "budget spent: the flag is dropped");
  assert.equal(withinBudget("garbage-1", take), "garbage-1", "malformed: the SDK ignores it");
});
