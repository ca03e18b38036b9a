import assert from "node:assert/strict";
import { ComponentStackError, linkComponentStack } from "../../client/component_stack.ts";

const STACK =
  "\n    at Boom (http://x/build/main-A.js:1:20)\n    at div\n    at App (http://x/build/main-A.js:1:10)";

Deno.test("linkComponentStack: sets the component stack as the error's cause", () => {
  const error = new Error("boom");
  assert.equal(linkComponentStack(error, STACK), true);
  const cause = error.cause;
  assert.ok(cause instanceof ComponentStackError);
  assert.equal(cause.name, "React component stack");
  assert.equal(cause.message, "boom");
  assert.equal(cause.stack, STACK);
});

Deno.test("linkComponentStack: appends at the end of an existing chain of causes", () => {
  const root = new Error("root");
  const error = new Error("outer", { cause: new Error("middle", { cause: root }) });
  assert.equal(linkComponentStack(error, STACK), true);
  assert.ok(root.cause instanceof ComponentStackError);
  assert.equal(root.cause.message, "outer", "named after the error React reported");
});

Deno.test("linkComponentStack: links once, even when the same error is reported again", () => {
  const error = new Error("boom");
  assert.equal(linkComponentStack(error, STACK), true);
  const first = error.cause;
  assert.equal(linkComponentStack(error, STACK), false);
  assert.equal(error.cause, first);
  assert.equal((first as Error).cause, undefined);
});

Deno.test("linkComponentStack: leaves alone what it cannot link to", () => {
  // Not an Error: Sentry reports it without a stack anyway.
  assert.equal(linkComponentStack("boom", STACK), false);
  assert.equal(linkComponentStack({ message: "boom" }, STACK), false);
  // An empty component stack has no frames to send.
  const empty = new Error("boom");
  assert.equal(linkComponentStack(empty, "  \n"), false);
  assert.equal(empty.cause, undefined);
  // A cause the app set to something else is kept.
  const withValue = new Error("boom", { cause: "a reason" });
  assert.equal(linkComponentStack(withValue, STACK), false);
  assert.equal(withValue.cause, "a reason");
  // A frozen error cannot take a cause; the error is still reported, so no throw.
  const frozen = Object.freeze(new Error("boom"));
  assert.equal(linkComponentStack(frozen, STACK), false);
});

Deno.test("linkComponentStack: a cyclic or very long chain is walked a bounded number of steps", () => {
  const a = new Error("a");
  const b = new Error("b", { cause: a });
  a.cause = b;
  assert.equal(linkComponentStack(a, STACK), false);
  assert.equal(a.cause, b);
  assert.equal(b.cause, a);

  // Count the steps: each link's `cause` getter is read at most once.
  let reads = 0;
  const chain = Array.from({ length: 1000 }, (_, i) => new Error(`e${i}`));
  chain.forEach((error, i) => {
    const next = chain[i + 1];
    Object.defineProperty(error, "cause", {
      get: () => (reads++, next),
      configurable: true,
    });
  });
  assert.equal(linkComponentStack(chain[0], STACK), false);
  assert.ok(reads <= 5, `${reads} reads`);
});
