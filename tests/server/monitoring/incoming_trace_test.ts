import assert from "node:assert/strict";
import { MAX_BAGGAGE_STRING_LENGTH } from "@sentry/core";
import type { Event } from "@sentry/core";
import { incomingTrace } from "../../../server/monitoring/incoming_trace.ts";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import { startMonitoredApp } from "../../support/monitored_app.ts";

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
  // Malformed: a new trace (the SDK would ignore it and its baggage anyway).
  assert.deepEqual(incomingTrace("garbage-1", baggage, take), { sentryTrace: "", baggage: null });
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
    // Its own trace's id, then more: cut to the id.
    `sentry-trace_id=${ID.slice(0, 32)}${"v".repeat(468)}`,
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

Deno.test("incomingTrace: all-zero ids start a new trace; a baggage of another trace is dropped", () => {
  const zeros = (n: number) => "0".repeat(n);
  const fresh = { sentryTrace: "", baggage: null };
  assert.deepEqual(incomingTrace(`${zeros(32)}-${zeros(16)}-1`, "sentry-release=r", always), fresh);
  assert.deepEqual(incomingTrace(`${zeros(32)}-00f067aa0ba902b7-1`, null, always), fresh);
  assert.deepEqual(
    incomingTrace(`4bf92f3577b34da6a3ce929d0e0e4736-${zeros(16)}`, null, always),
    fresh,
  );
  const other = "sentry-trace_id=11111111111111111111111111111111,sentry-release=r";
  assert.deepEqual(incomingTrace(`${ID}-1`, other, always), {
    sentryTrace: `${ID}-1`,
    baggage: null,
  });
  const own = "sentry-trace_id=4bf92f3577b34da6a3ce929d0e0e4736,sentry-release=r";
  assert.equal(incomingTrace(`${ID}-1`, own, always).baggage, own);
});

Deno.test({
  name:
    "over HTTP: an all-zero sentry-trace gets a fresh trace in the transaction and the page; another trace's baggage reaches no envelope",
  // The SDK's client is process-wide: its flush leaves a timer of its own for the timeout.
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await using ingest = startFakeIngest();
  await using app = startMonitoredApp(ingest);
  const zero = `${"0".repeat(32)}-${"0".repeat(16)}-1`;
  const metaTrace = async (headers: Record<string, string>) => {
    const html = await (await fetch(`${app.url}/`, { headers })).text();
    return /<meta name="sentry-trace" content="([0-9a-f]{32})-[0-9a-f]{16}/.exec(html)?.[1];
  };
  const fresh = [
    await metaTrace({ "sentry-trace": zero }),
    await metaTrace({ "sentry-trace": zero }),
  ];
  const head = "sentry-trace_id=22222222222222222222222222222222,sentry-release=evil-release";
  const continued = await metaTrace({ "sentry-trace": `${ID}-1`, baggage: head });
  await app.stop();

  for (const id of fresh) assert.match(id ?? "", /^(?!0+$)[0-9a-f]{32}$/);
  assert.notEqual(fresh[0], fresh[1], "a new trace each time");
  assert.equal(continued, ID.slice(0, 32), "the trace itself is continued");
  const envelopes = await ingest.envelopes();
  const traces = envelopes.flatMap(([, items]) =>
    items.filter(([h]) => h.type === "transaction").map(([, e]) =>
      (e as Event).contexts?.trace?.trace_id
    )
  );
  assert.deepEqual(traces.toSorted(), [...fresh, continued].toSorted());
  const headers = JSON.stringify(envelopes.map(([header]) => header));
  assert.ok(!headers.includes("evil-release") && !headers.includes("2222"), headers);
  assert.ok(!headers.includes("0".repeat(32)), headers);
});
