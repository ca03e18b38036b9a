import assert from "node:assert/strict";
import { joinWorkers } from "../../../server/lifecycle/shutdown.ts";

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2_000 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(check());
}

Deno.test("joinWorkers: each learns of the others, and is finished only when all are", async () => {
  const name = `test-${crypto.randomUUID()}`;
  const first = joinWorkers(name);
  const second = joinWorkers(name);
  const third = joinWorkers(name);
  try {
    // The first hello went out before the others listened: the answers to theirs fill it in.
    await until(() => first.known === 3 && second.known === 3 && third.known === 3);
    const order: string[] = [];
    const done = [
      first.finished().then(() => order.push("first")),
      second.finished().then(() => order.push("second")),
    ];
    // Long enough for their "done" messages to be delivered (a negative check, not a timing).
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(order, [], "not while the third is still draining");
    await Promise.all([third.finished(), ...done]);
    assert.deepEqual(order.sort(), ["first", "second"]);
  } finally {
    for (const workers of [first, second, third]) workers.close();
  }
});
