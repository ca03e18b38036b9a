import assert from "node:assert/strict";
import fc from "fast-check";
import { parseSentryTrace } from "../../../server/monitoring/sentry_trace.ts";

const TRACE = "0af7651916cd43dd8448eb211c80319c";
const SPAN = "b7ad6b7169203331";

Deno.test("parseSentryTrace reads the ids and the sampled flag", () => {
  assert.deepEqual(parseSentryTrace(`${TRACE}-${SPAN}-1`), {
    traceId: TRACE,
    parentSpanId: SPAN,
    sampled: true,
  });
  assert.equal(parseSentryTrace(`${TRACE}-${SPAN}-0`)?.sampled, false);
  assert.equal(parseSentryTrace(`${TRACE}-${SPAN}`)?.sampled, undefined);
  assert.equal(parseSentryTrace(` \t${TRACE}-${SPAN}-1 `)?.traceId, TRACE);
});

Deno.test("parseSentryTrace treats anything malformed as absent", () => {
  for (
    const value of [
      "",
      "-",
      "--1",
      `${TRACE}`,
      `${TRACE}-`,
      `-${SPAN}-1`,
      `${TRACE}-${SPAN}-2`,
      `${TRACE}-${SPAN}-1-1`,
      `${TRACE.toUpperCase()}-${SPAN}-1`,
      `${TRACE}x-${SPAN}-1`,
      `${TRACE}-${SPAN}1-1`,
      `${"0".repeat(32)}-${SPAN}-1`,
      `${TRACE}-${"0".repeat(16)}-1`,
      `${TRACE}-${SPAN}-1\n`,
      `${" ".repeat(20)}${TRACE}-${SPAN}-1`,
      " ".repeat(100_000) + `${TRACE}-${SPAN}-1`,
      "__proto__",
    ]
  ) {
    assert.equal(parseSentryTrace(value), undefined, JSON.stringify(value.slice(0, 80)));
  }
});

Deno.test("parseSentryTrace never throws, and accepts only well-formed values", () => {
  const wellFormed = /^[ \t]*[0-9a-f]{32}-[0-9a-f]{16}(-[01])?[ \t]*$/;
  fc.assert(
    fc.property(fc.string({ maxLength: 80, unit: "binary" }), (value) => {
      const parsed = parseSentryTrace(value);
      if (parsed !== undefined) assert.match(value, wellFormed);
    }),
  );
  fc.assert(
    fc.property(
      fc.stringMatching(/^[0-9a-f]{32}$/),
      fc.stringMatching(/^[0-9a-f]{16}$/),
      fc.constantFrom("", "-0", "-1"),
      (trace, span, flag) => {
        fc.pre(/[1-9a-f]/.test(trace) && /[1-9a-f]/.test(span));
        assert.equal(parseSentryTrace(`${trace}-${span}${flag}`)?.traceId, trace);
      },
    ),
  );
});
