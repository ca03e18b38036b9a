import assert from "node:assert/strict";
import {
  MAX_KEYS,
  MAX_LINKED,
  MAX_STRING,
  reportable,
} from "../../../server/monitoring/reportable.ts";

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

Deno.test("lines in a message are not frames of the stack the SDK parses; the message is kept", () => {
  let parseError: Error | undefined;
  try {
    JSON.parse("[1,\n    at p1 (");
  } catch (error) {
    parseError = error as Error;
  }
  assert.match(parseError!.stack!, /\n {4}at p1/, "V8 quotes the input, line break included");
  const kept = reportable(parseError) as Error;
  assert.equal(kept.message, parseError!.message);
  assert.doesNotMatch(kept.stack!, /\n {4}at p1/);
  assert.match(kept.stack!, /^SyntaxError: .*at p1.*\n {4}at JSON\.parse/);
});
