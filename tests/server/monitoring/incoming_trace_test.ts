import assert from "node:assert/strict";
import { MAX_BAGGAGE_STRING_LENGTH } from "@sentry/core";
import { incomingTrace } from "../../../server/monitoring/incoming_trace.ts";

const ID = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7";
const always = () => true;

Deno.test("incomingTrace: a client's say in sampling is kept only while the budget lasts", () => {
  const baggage = "sentry-sample_rand=0,sentry-sample_rate=1";
  let tokens = 2;
  const take = () => tokens-- > 0;
  const keep = (trace: string) => ({ sentryTrace: trace, baggage });
  assert.deepEqual(incomingTrace(`${ID}-0`, baggage, take), keep(`${ID}-0`), "'no' costs nothing");
  assert.equal(tokens, 2);
  assert.deepEqual(incomingTrace(`${ID}-1`, baggage, take), keep(`${ID}-1`), "within the budget");
  assert.deepEqual(incomingTrace(ID, baggage, take), keep(ID), "baggage alone spends it too");
  // Budget spent: neither the flag nor the baggage's sample_rand decides any more.
  assert.deepEqual(incomingTrace(` ${ID}-1\t`, baggage, take), { sentryTrace: ID, baggage: null });
  assert.deepEqual(incomingTrace(ID, baggage, take), { sentryTrace: ID, baggage: null });
  assert.deepEqual(incomingTrace("garbage-1", baggage, take), keep("garbage-1"), "malformed");
});

Deno.test("incomingTrace: a head's context is passed on as it came, only its Sentry keys", () => {
  const head = "sentry-trace_id=4bf92f3577b34da6a3ce929d0e0e4736,sentry-public_key=key," +
    "sentry-release=web%401.2.3,sentry-environment=prod,sentry-transaction=%2Fusers%2F%3Aid," +
    "sentry-sample_rate=0.5,sentry-sample_rand=0.25,sentry-sampled=true,sentry-org_id=12";
  assert.deepEqual(incomingTrace(`${ID}-1`, `${head},other=x,sentry-mine=y`, always), {
    sentryTrace: `${ID}-1`,
    baggage: head,
  });
  assert.equal(incomingTrace(ID, "other=x", always).baggage, null, "no Sentry key: no context");
  assert.equal(incomingTrace(ID, "", always).baggage, null);
});

Deno.test("incomingTrace: a baggage over Sentry's own limit is not continued", () => {
  const filler = "x".repeat(MAX_BAGGAGE_STRING_LENGTH);
  const at = `sentry-public_key=key,o=${filler}`.slice(0, MAX_BAGGAGE_STRING_LENGTH);
  assert.equal(incomingTrace(`${ID}-1`, at, always).baggage, "sentry-public_key=key");
  assert.deepEqual(incomingTrace(`${ID}-1`, `${at}x`, always), {
    sentryTrace: `${ID}-1`,
    baggage: null,
  });
  const release = `sentry-release=${"r".repeat(20_000)},sentry-public_key=key`;
  assert.equal(incomingTrace(`${ID}-1`, release, always).baggage, null);
});

Deno.test("incomingTrace: each value is cut to what Sentry's ingest keeps", () => {
  const long = (key: string, n: number) => `sentry-${key}=${"v".repeat(n)}`;
  const baggage = [
    long("release", 2_000),
    long("environment", 1_000),
    long("transaction", 2_000),
    long("user_id", 1_000),
    long("public_key", 500),
    long("trace_id", 500),
    long("sample_rand", 300),
  ].join(",");
  assert.ok(baggage.length < MAX_BAGGAGE_STRING_LENGTH);
  const kept = new Map(
    incomingTrace(`${ID}-1`, baggage, always).baggage?.split(",").map((entry) => {
      const [key, value] = entry.split("=");
      return [key, value.length];
    }),
  );
  assert.deepEqual(
    kept,
    new Map([
      ["sentry-release", 200],
      ["sentry-environment", 64],
      ["sentry-transaction", 200],
      ["sentry-user_id", 128],
      ["sentry-public_key", 32],
      ["sentry-trace_id", 32],
      ["sentry-sample_rand", 32],
    ]),
  );
  // A cut inside a character that takes two UTF-16 units still encodes.
  const emoji = `sentry-release=${"r".repeat(199)}${encodeURIComponent("😀")}`;
  assert.equal(
    incomingTrace(`${ID}-1`, emoji, always).baggage,
    `sentry-release=${"r".repeat(199)}${encodeURIComponent("\uFFFD")}`,
  );
});
