import assert from "node:assert/strict";
import { createTransport, type Envelope, SENTRY_BUFFER_FULL_ERROR } from "@sentry/core";
import { SEND_BUFFER_LIMIT, sendBuffer } from "../../../server/monitoring/send_buffer.ts";

const envelope = (id: string) =>
  [{ event_id: id }, [[{ type: "transaction" }, { event_id: id }]]] as unknown as Envelope;

Deno.test("sendBuffer refuses the task past its limit with the SDK's own reason", async () => {
  const buffer = sendBuffer<number>(2);
  const gates = [Promise.withResolvers<number>(), Promise.withResolvers<number>()];
  const first = buffer.add(() => gates[0].promise);
  buffer.add(() => gates[1].promise);
  let produced = false;
  await assert.rejects(
    Promise.resolve(buffer.add(() => {
      produced = true;
      return Promise.resolve(3);
    })),
    (reason) => reason === SENTRY_BUFFER_FULL_ERROR,
  );
  assert.equal(produced, false, "a refused task is never started");
  gates[0].resolve(1);
  assert.equal(await first, 1, "the task's own promise, with its value");
  // A slot is free again once a task settled, rejected ones included.
  assert.equal(await buffer.add(() => Promise.resolve(4)), 4);
  gates[1].reject(new Error("network"));
  await assert.rejects(gates[1].promise);
  assert.equal(await buffer.drain(1_000), true);
  assert.equal(SEND_BUFFER_LIMIT, 64, "the SDK's default");
});

// The test sanitizer fails the test if the 5 s timer were left running.
Deno.test("sendBuffer.drain: true once what was in flight is answered, false at its timeout", async () => {
  const buffer = sendBuffer<number>();
  assert.equal(await buffer.drain(), true);
  const gate = Promise.withResolvers<number>();
  buffer.add(() => gate.promise);
  assert.equal(await buffer.drain(5), false);
  const unbounded = buffer.drain(0); // 0 or none: no limit, as in the SDK
  const bounded = buffer.drain(5_000);
  // What comes after a drain began does not hold it up, as in the SDK.
  buffer.add(() => new Promise(() => {}));
  setTimeout(() => gate.resolve(1), 20);
  assert.deepEqual(await Promise.all([unbounded, bounded]), [true, true]);
});

Deno.test("sendBuffer: a task that throws as it starts takes no place", async () => {
  const buffer = sendBuffer<number>(1);
  assert.throws(() =>
    buffer.add(() => {
      throw new Error("could not start");
    }), /could not start/);
  assert.equal(await buffer.add(() => Promise.resolve(2)), 2, "the one place is free");
  assert.equal(await buffer.drain(1_000), true);
});

Deno.test("createTransport with sendBuffer: sends, and counts an overflow as queue_overflow", async () => {
  const dropped: string[] = [];
  const gate = Promise.withResolvers<{ statusCode: number }>();
  let requests = 0;
  const transport = createTransport(
    { recordDroppedEvent: (reason, category) => dropped.push(`${reason}:${category}`) },
    () => {
      requests++;
      return gate.promise;
    },
    sendBuffer(1),
  );
  const sent = transport.send(envelope("a1"));
  assert.deepEqual(await transport.send(envelope("b2")), {});
  assert.deepEqual(dropped, ["queue_overflow:transaction"]);
  gate.resolve({ statusCode: 200 });
  assert.equal((await sent).statusCode, 200);
  assert.equal(requests, 1);
  assert.equal(await transport.flush(1_000), true);
});
