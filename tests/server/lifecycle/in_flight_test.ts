/** InFlight counts running handlers and tells shutdown when none is left. */
import assert from "node:assert/strict";
import { InFlight } from "../../../server/lifecycle/in_flight.ts";

const info = {} as Deno.ServeHandlerInfo;
const req = new Request("http://x/");

Deno.test("InFlight counts a handler from its call until its response or error", async () => {
  const inFlight = new InFlight();
  const gate = Promise.withResolvers<Response>();
  const handler = inFlight.track(() => gate.promise);
  const pending = handler(req, info);
  assert.equal(inFlight.count, 1);
  let idle: boolean | undefined;
  const waiting = inFlight.idle(60_000).then((value) => idle = value);
  await Promise.resolve();
  assert.equal(idle, undefined, "not idle while a handler runs");
  gate.resolve(new Response("ok"));
  await pending;
  assert.equal(await waiting, true);
  assert.equal(inFlight.count, 0);

  // Synchronous answers and throws count too, and leave nothing behind.
  assert.equal((await inFlight.track(() => new Response("sync"))(req, info)).status, 200);
  assert.throws(() =>
    inFlight.track(() => {
      throw new Error("boom");
    })(req, info)
  );
  await assert.rejects(async () =>
    await inFlight.track(() => Promise.reject(new Error("late")))(req, info)
  );
  assert.equal(inFlight.count, 0);
  assert.equal(await inFlight.idle(0), true);
});

Deno.test("InFlight.idle gives up after its timeout", async () => {
  const inFlight = new InFlight();
  const gate = Promise.withResolvers<Response>();
  const pending = inFlight.track(() => gate.promise)(req, info);
  assert.equal(await inFlight.idle(1), false);
  gate.resolve(new Response("ok"));
  await pending;
  assert.equal(inFlight.count, 0);
});
