import assert from "node:assert/strict";
import {
  newSpanId,
  newTraceId,
  type RequestTrace,
  sampleRandText,
  samplingContext,
  spanStatus,
  transactionEnvelope,
  transactionEvent,
} from "../../../server/monitoring/request_recorder.ts";

const defaults = {
  environment: "production",
  release: "r1",
  sampleRate: 0.1,
  publicKey: "key",
  sdk: { name: "sentry.javascript.deno", version: "10.75.2" },
};
const trace: RequestTrace = {
  traceId: "0123456789abcdef0123456789abcdef",
  spanId: "89abcdef01234567",
  parentSpanId: "0123456789abcdef",
  sampled: true,
  sampleRand: 0.05,
};

Deno.test("ids: 32 and 16 lowercase hex digits, fresh each time", () => {
  const traces = new Set(Array.from({ length: 1000 }, newTraceId));
  const spans = new Set(Array.from({ length: 1000 }, newSpanId));
  assert.equal(traces.size, 1000);
  assert.equal(spans.size, 1000);
  for (const id of traces) assert.match(id, /^[0-9a-f]{32}$/);
  for (const id of spans) assert.match(id, /^[0-9a-f]{16}$/);
});

Deno.test("spanStatus follows Sentry's setHttpStatus", () => {
  assert.equal(spanStatus(200), "ok");
  assert.equal(spanStatus(304), "ok");
  assert.equal(spanStatus(404), "not_found");
  assert.equal(spanStatus(418), "invalid_argument");
  assert.equal(spanStatus(500), "internal_error");
  assert.equal(spanStatus(503), "unavailable");
  assert.equal(spanStatus(999), "unknown_error");
});

Deno.test("transactionEvent: one http.server root span with the request's trace and status", () => {
  const event = transactionEvent(trace, {
    method: "GET",
    url: "http://localhost/?q=1",
    pathname: "/",
    status: 404,
    startMs: 1_700_000_000_000,
    endMs: 1_700_000_000_250,
  }, defaults);
  assert.equal(event.type, "transaction");
  assert.equal(event.transaction, "GET /");
  assert.deepEqual(event.transaction_info, { source: "url" });
  assert.equal(event.start_timestamp, 1_700_000_000);
  assert.equal(event.timestamp, 1_700_000_000.25);
  assert.equal(event.release, "r1");
  assert.equal(event.environment, "production");
  assert.deepEqual(event.request, { method: "GET", url: "http://localhost/?q=1" });
  const context = event.contexts?.trace;
  assert.equal(context?.trace_id, trace.traceId);
  assert.equal(context?.span_id, trace.spanId);
  assert.equal(context?.parent_span_id, trace.parentSpanId);
  assert.equal(context?.op, "http.server");
  assert.equal(context?.status, "not_found");
  assert.equal(context?.data?.["http.response.status_code"], 404);
  assert.match(event.event_id ?? "", /^[0-9a-f]{32}$/);
  const root = transactionEvent({ ...trace, parentSpanId: undefined }, {
    method: "HEAD",
    url: "http://localhost/",
    pathname: "/",
    status: 200,
    startMs: 0,
    endMs: 1,
  }, defaults);
  assert.ok(!("parent_span_id" in (root.contexts?.trace ?? {})), "a root span has no parent");
});

Deno.test("transactionEnvelope: one transaction item, the server's sampling context in its header", () => {
  const event = transactionEvent(trace, {
    method: "GET",
    url: "http://localhost/",
    pathname: "/",
    status: 200,
    startMs: 0,
    endMs: 1,
  }, defaults);
  const [header, items] = transactionEnvelope(
    event,
    samplingContext(trace, defaults),
    defaults.sdk,
  );
  assert.equal(header.event_id, event.event_id);
  assert.deepEqual(header.trace, {
    trace_id: trace.traceId,
    environment: "production",
    release: "r1",
    public_key: "key",
    sample_rate: "0.1",
    sampled: "true",
    sample_rand: "0.050000",
  });
  assert.equal(items.length, 1);
  assert.deepEqual(items[0][0], { type: "transaction" });
  assert.equal(items[0][1], event);
});

Deno.test("sampleRandText: six decimals, and below 1 however close the draw is", () => {
  assert.equal(sampleRandText(0.05), "0.050000");
  assert.equal(sampleRandText(0), "0.000000");
  assert.equal(sampleRandText(0.9999994), "0.999999");
  assert.equal(sampleRandText(0.9999997), "0.999999");
});
