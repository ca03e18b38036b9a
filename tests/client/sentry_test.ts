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
    setTag: (key: string, value: unknown) => calls.push(["tag", key, value]),
    setContext: (name: string, context: unknown) => calls.push(["context", name, context]),
    addBreadcrumb: (breadcrumb: unknown) => calls.push(["breadcrumb", breadcrumb]),
    withScope: (callback: (scope: string) => void) => callback("a scope"),
    log: (level: string, message: string, attributes?: unknown) =>
      calls.push(["log", level, message, attributes]),
    openFeedbackForm: () => calls.push(["feedback form"]),
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

Deno.test("tags, contexts, breadcrumbs, scopes, logs and the feedback form wait for the SDK too", async () => {
  const Sentry = await freshModule();
  const scopes: unknown[] = [];
  Sentry.setTag("plan", "pro");
  Sentry.setContext("cart", { items: 3 });
  Sentry.addBreadcrumb({ message: "added to cart" });
  Sentry.withScope((scope) => scopes.push(scope));
  Sentry.logger.info("cart loaded", { items: 3 });
  Sentry.logger.error("payment failed");
  Sentry.openFeedbackForm();
  assert.deepEqual(scopes, [], "nothing runs before the SDK is up");
  const calls: unknown[][] = [];
  Sentry.attachSdk(recordingSdk(calls));
  assert.deepEqual(calls, [
    ["tag", "plan", "pro"],
    ["context", "cart", { items: 3 }],
    ["breadcrumb", { message: "added to cart" }],
    ["log", "info", "cart loaded", { items: 3 }],
    ["log", "error", "payment failed", undefined],
    ["feedback form"],
  ]);
  assert.deepEqual(scopes, ["a scope"]);
  for (const level of ["trace", "debug", "warn", "fatal"] as const) Sentry.logger[level](level);
  assert.deepEqual(calls.slice(6).map((call) => call[1]), ["trace", "debug", "warn", "fatal"]);
});
