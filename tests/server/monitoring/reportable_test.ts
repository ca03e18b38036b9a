import assert from "node:assert/strict";
import { createStackParser, exceptionFromError, nodeStackLineParser } from "@sentry/core";
import {
  MAX_KEYS,
  MAX_LINKED,
  MAX_NAME,
  MAX_STRING,
  reportable,
} from "../../../server/monitoring/reportable.ts";

const stackParser = createStackParser(nodeStackLineParser());

Deno.test("an ordinary error, and primitives, are given to the SDK as they are", () => {
  const error = new TypeError("x is undefined", { cause: new Error("below") });
  assert.equal(reportable(error), error);
  const aggregate = new AggregateError([new Error("a"), new Error("b")], "two");
  assert.equal(reportable(aggregate), aggregate);
  for (const value of ["text", 42, undefined, null, true]) assert.equal(reportable(value), value);
});

Deno.test("what the SDK cannot read becomes something it can", () => {
  assert.equal(reportable(Symbol("odd")), "Symbol(odd)");
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const getter = new Error("x");
  Object.defineProperty(getter, "stack", {
    get() {
      throw new Error("no stack for you");
    },
  });
  const namedOddly = Object.assign(new Error("y"), { name: 42 });
  for (const thrown of [revoked.proxy, getter, namedOddly]) {
    const stand = reportable(thrown);
    assert.ok(stand instanceof Error, String(stand));
    assert.match(stand.message, /could not be read|not text/);
    assert.doesNotThrow(() => `${stand.name}: ${stand.message} ${stand.stack}`);
  }
});

Deno.test("an AggregateError of 20,000 keeps its first five, with its type, message and stack", () => {
  const many = new AggregateError(
    Array.from({ length: 20_000 }, (_, i) => new Error(`child ${i}`)),
    "many",
  );
  const kept = reportable(many) as Error & { errors: Error[] };
  assert.notEqual(kept, many);
  assert.equal(kept.name, "AggregateError");
  assert.equal(kept.message, "many");
  assert.equal(kept.stack, many.stack);
  assert.equal(kept.errors.length, MAX_LINKED);
  assert.deepEqual(kept.errors.map((e) => e.message), [
    "child 0",
    "child 1",
    "child 2",
    "child 3",
    "child 4",
  ]);
});

Deno.test("causes are followed five levels deep, cycles included, and bounded below", () => {
  const cyclic = new Error("self");
  cyclic.cause = cyclic;
  let depth = 0;
  for (let e: unknown = reportable(cyclic); e instanceof Error; e = e.cause) depth++;
  assert.equal(depth, MAX_LINKED);
  // An AggregateError of thousands as a cause is cut where it is.
  const deep = new Error("top", {
    cause: new AggregateError(new Array(5_000).fill(new Error("x"))),
  });
  const kept = reportable(deep) as Error;
  assert.equal((kept.cause as { errors: unknown[] }).errors.length, MAX_LINKED);
});

Deno.test("a thrown plain object: its first keys, strings cut, nothing nested, __proto__ as data", () => {
  const huge: Record<string, unknown> = { big: "s".repeat(5_000_000), nested: { a: 1 }, n: 7 };
  for (let i = 0; i < 1_000; i++) huge[`k${i}`] = i;
  const kept = reportable(huge) as Record<string, unknown>;
  assert.equal((kept.big as string).length, MAX_STRING);
  assert.equal(kept.nested, "[object]");
  assert.equal(kept.n, 7);
  assert.equal(Object.keys(kept).length, MAX_KEYS);
  const proto = reportable(JSON.parse('{"__proto__": {"polluted": true}}')) as object;
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.equal(Object.hasOwn(proto, "__proto__"), true);
  assert.equal(({} as { polluted?: boolean }).polluted, undefined);
});

// V8's JSON.parse error for `text`: its message quotes the text, line breaks included.
function parseErrorOf(text: string): Error {
  try {
    JSON.parse(text);
  } catch (error) {
    return error as Error;
  }
  throw new Error(`${JSON.stringify(text)} parsed`);
}

Deno.test("lines in a message are not frames of the stack the SDK parses; the message is kept", () => {
  const parseError = parseErrorOf("[1,\n    at p1 (");
  assert.match(parseError.stack!, /\n {4}at p1/, "V8 quotes the input, line break included");
  const kept = reportable(parseError) as Error;
  assert.equal(kept.message, parseError.message);
  assert.doesNotMatch(kept.stack!, /\n {4}at p1/);
  assert.match(kept.stack!, /^SyntaxError: .*at p1.*\n {4}at JSON\.parse/);
});

Deno.test("a function, or an error whose stack is not text, becomes an error the SDK reads", () => {
  const revoked = Proxy.revocable(function thrown() {}, {});
  revoked.revoke();
  const hostileText = Object.assign(() => {}, {
    toString() {
      throw new Error("no text");
    },
  });
  for (const fn of [() => {}, revoked.proxy, hostileText]) {
    const stand = reportable(fn) as Error;
    assert.equal(stand.message, "a thrown function");
    // No frames: made in reportable.ts, it would name that module as where the fault was.
    assert.equal(stand.stack, "Error: a thrown function");
    assert.equal(exceptionFromError(stackParser, stand).stacktrace, undefined);
  }
  for (const stack of [42, {}, Symbol("s")]) {
    const odd = Object.assign(new Error("odd stack", { cause: new Error("below") }), { stack });
    // The SDK's own parse of such an error throws (stack.split is not a function).
    assert.throws(() => exceptionFromError(stackParser, odd));
    const kept = reportable(odd) as Error;
    assert.equal(kept.message, "odd stack");
    assert.equal((kept.cause as Error).message, "below");
    // No stack at all, rather than the copy's own frames (which would be reportable.ts's).
    assert.equal(kept.stack, undefined);
    assert.equal(exceptionFromError(stackParser, kept).stacktrace, undefined);
  }
});

Deno.test("an error's name is cut: the SDK bounds the message it sends, not the type", () => {
  const long = Object.assign(new Error("m"), { name: "N".repeat(1_000_000) });
  const kept = reportable(new Error("top", { cause: long })) as Error;
  const cause = kept.cause as Error;
  assert.equal(cause.name.length, MAX_NAME);
  assert.equal(cause.stack, long.stack, "the frames are kept");
  assert.equal(exceptionFromError(stackParser, cause).type?.length, MAX_NAME);
});

Deno.test("a message changed after its stack was read still writes no frames", () => {
  const parseError = parseErrorOf("[1,\n    at p1 (");
  void parseError.stack;
  parseError.message = `invalid body: ${parseError.message}`;
  const kept = reportable(parseError) as Error;
  assert.doesNotMatch(kept.stack!, /\n {4}at p1/);
  const frames = exceptionFromError(stackParser, kept).stacktrace?.frames ?? [];
  assert.ok(frames.length > 0);
  assert.ok(frames.every((frame) => frame.function !== "p1"), JSON.stringify(frames));
});
