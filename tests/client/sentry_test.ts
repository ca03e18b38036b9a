/**
 * client/sentry.ts: what app code calls before the SDK chunk is up is replayed once it is;
 * afterwards calls go straight through; with monitoring off nothing is kept.
 */
import assert from "node:assert/strict";

// A fresh copy of the module per test: its queue is module state.
async function freshModule() {
  return await import(
    `../../client/sentry.ts?copy=${crypto.randomUUID()}`
  ) as typeof import("../../client/sentry.ts");
}

function recordingSdk(calls: unknown[][]) {
  return {
    captureException: (error: unknown) => (calls.push(["exception", error]), ""),
    captureMessage: (
      message: string,
      level?: string,
    ) => (calls.push(["message", message, level]), ""),
    setUser: (user: unknown) => calls.push(["user", user]),
    startSpan: <T>(options: { name: string }, callback: () => T) => {
      calls.push(["span", options.name]);
      return callback();
    },
    startInactiveSpan: (options: { name: string; startTime?: number }) => ({
      end: (endTime?: number) => calls.push(["inactive", options.name, options.startTime, endTime]),
    }),
  } as unknown as Parameters<typeof import("../../client/sentry.ts").attachSdk>[0];
}

Deno.test("calls before the SDK is up are replayed in order once it is; then they go straight through", async () => {
  const Sentry = await freshModule();
  const error = new Error("early");
  Sentry.captureException(error);
  Sentry.setUser({ id: "u1" });
  Sentry.captureMessage("clicked");
  const value = await Sentry.startSpan({ name: "load cart" }, () => Promise.resolve(42));
  assert.equal(value, 42, "the callback's result, whether or not the SDK is up");
  const calls: unknown[][] = [];
  Sentry.attachSdk(recordingSdk(calls));
  assert.deepEqual(calls.slice(0, 3), [
    ["exception", error],
    ["user", { id: "u1" }],
    ["message", "clicked", "info"],
  ]);
  const [kind, name, start, end] = calls[3] as [string, string, number, number];
  assert.deepEqual([kind, name], ["inactive", "load cart"]);
  assert.ok(start > 1e9 && end >= start, "the span keeps the times it really had, in seconds");
  Sentry.captureMessage("later", "warning");
  assert.equal(Sentry.startSpan({ name: "direct" }, () => "x"), "x");
  assert.deepEqual(calls.slice(4), [["message", "later", "warning"], ["span", "direct"]]);
});

Deno.test("with monitoring off nothing is kept; the queue holds at most 100 calls", async () => {
  const off = await freshModule();
  off.disable();
  off.captureMessage("never sent");
  const calls: unknown[][] = [];
  off.attachSdk(recordingSdk(calls));
  assert.deepEqual(calls, []);

  const busy = await freshModule();
  for (let i = 0; i < 150; i++) busy.captureMessage(`m${i}`);
  const replayed: unknown[][] = [];
  busy.attachSdk(recordingSdk(replayed));
  assert.equal(replayed.length, 100);
  assert.deepEqual(replayed.at(-1), ["message", "m99", "info"]);
});
