import assert from "node:assert/strict";
import { ErrorBuffer, type ErrorContext } from "../../client/error_buffer.ts";

const ctx: ErrorContext = { mechanism: "test", handled: true };

Deno.test("ErrorBuffer: keeps errors until a sink attaches, then forwards directly", () => {
  const buffer = new ErrorBuffer();
  buffer.capture("early-1", ctx);
  buffer.capture("early-2", ctx);
  assert.equal(buffer.size, 2);
  const seen: unknown[] = [];
  buffer.attach((error) => seen.push(error), { stopListening: false });
  assert.deepEqual(seen, ["early-1", "early-2"]);
  buffer.capture("late", ctx);
  assert.deepEqual(seen, ["early-1", "early-2", "late"]);
  assert.equal(buffer.size, 0);
});

Deno.test("ErrorBuffer: bounded, dropping the oldest", () => {
  const buffer = new ErrorBuffer();
  for (let i = 0; i < 60; i++) buffer.capture(i, ctx);
  const seen: unknown[] = [];
  buffer.attach((error) => seen.push(error), { stopListening: false });
  assert.equal(seen.length, 50);
  assert.equal(seen[0], 10);
});

Deno.test("ErrorBuffer: listens for uncaught errors and rejections until told to stop", () => {
  const target = new EventTarget() as unknown as Window;
  const buffer = new ErrorBuffer();
  buffer.listen(target);
  const error = new Error("boom");
  target.dispatchEvent(Object.assign(new Event("error"), { error }));
  target.dispatchEvent(Object.assign(new Event("unhandledrejection"), { reason: "nope" }));
  const seen: [unknown, ErrorContext][] = [];
  buffer.attach((e, c) => seen.push([e, c]), { stopListening: true });
  assert.deepEqual(seen.map(([e, c]) => [e, c.mechanism]), [
    [error, "onerror"],
    ["nope", "onunhandledrejection"],
  ]);
  target.dispatchEvent(Object.assign(new Event("error"), { error: new Error("later") }));
  assert.equal(seen.length, 2, "after attach, Sentry's own handlers take over");
});
