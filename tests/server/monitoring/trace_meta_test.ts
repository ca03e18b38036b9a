import assert from "node:assert/strict";
import { traceMetaTagWriter } from "../../../server/monitoring/trace_meta.ts";

Deno.test("traceMetaTagWriter: sentry-trace and baggage agree on the trace and the decision", () => {
  const write = traceMetaTagWriter({
    environment: "prod uction",
    release: 'r"1<',
    public_key: "key",
    sample_rate: "0.1",
  });
  const base = { traceId: "0123456789abcdef0123456789abcdef", spanId: "89abcdef01234567" };
  const sampled = write({ ...base, sampled: true, sampleRand: 0.01 });
  assert.equal(
    sampled,
    '<meta name="sentry-trace" content="0123456789abcdef0123456789abcdef-89abcdef01234567-1">' +
      '<meta name="baggage" content="sentry-environment=prod%20uction,sentry-release=r%221%3C,' +
      "sentry-public_key=key,sentry-trace_id=0123456789abcdef0123456789abcdef," +
      'sentry-sampled=true,sentry-sample_rand=0.010000,sentry-sample_rate=0.1">',
  );
  const unsampled = write({ ...base, sampled: false, sampleRand: 0.5 });
  assert.match(unsampled, /-89abcdef01234567-0">/);
  assert.match(unsampled, /sentry-sampled=false,sentry-sample_rand=0\.500000,/);
});

Deno.test("traceMetaTagWriter: a quote that percent-encoding keeps is escaped for the attribute", () => {
  const write = traceMetaTagWriter({
    environment: "it's",
    release: "r'",
    public_key: "k",
    sample_rate: "1",
  });
  const tags = write({
    traceId: "0123456789abcdef0123456789abcdef",
    spanId: "89abcdef01234567",
    sampled: false,
    sampleRand: 0.25,
  });
  assert.ok(!tags.includes("'"), tags);
  assert.match(tags, /content="sentry-environment=it&#39;s,sentry-release=r&#39;,/);
});

Deno.test("a draw just below 1 is written below 1, as the draw is", () => {
  const write = traceMetaTagWriter({
    environment: "e",
    release: "r",
    public_key: "k",
    sample_rate: "0.1",
  });
  const tags = write({
    traceId: "a".repeat(32),
    spanId: "b".repeat(16),
    sampled: false,
    sampleRand: 0.9999997,
  });
  assert.match(tags, /sentry-sample_rand=0\.999999,/);
});
