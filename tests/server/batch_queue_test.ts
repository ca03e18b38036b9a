import assert from "node:assert/strict";
import { BatchQueue } from "../../server/batch_queue.ts";

Deno.test("BatchQueue: items wait for the first one's wait, then go together in order", async () => {
  const batches: number[][] = [];
  const queue = new BatchQueue<number>((items) => batches.push([...items]), {
    waitMs: 20,
    maxBatch: 10,
  });
  queue.push(1);
  queue.push(2);
  queue.push(3);
  assert.deepEqual(batches, [], "nothing is sent while the wait runs");
  assert.equal(queue.size, 3);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.deepEqual(batches, [[1, 2, 3]]);
  assert.equal(queue.size, 0);
});

Deno.test("BatchQueue: a full batch goes at once, and drain sends the rest", () => {
  const batches: number[][] = [];
  const queue = new BatchQueue<number>((items) => batches.push([...items]), {
    waitMs: 60_000,
    maxBatch: 4,
  });
  for (let i = 0; i < 10; i++) queue.push(i);
  assert.deepEqual(batches, [[0, 1, 2, 3], [4, 5, 6, 7]]);
  queue.drain();
  assert.deepEqual(batches, [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]);
  queue.drain();
  assert.equal(batches.length, 3, "an empty drain sends nothing");
});

Deno.test("BatchQueue: one timer per wait, however many full batches go within it", async () => {
  const batches: number[][] = [];
  const queue = new BatchQueue<number>((items) => batches.push([...items]), {
    waitMs: 20,
    maxBatch: 4,
  });
  const realSetTimeout = globalThis.setTimeout;
  let timers = 0;
  globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
    timers++;
    return realSetTimeout(...args);
  }) as typeof setTimeout;
  try {
    for (let i = 0; i < 402; i++) queue.push(i);
  } finally {
    globalThis.setTimeout = realSetTimeout;
  }
  assert.equal(batches.length, 100);
  assert.equal(timers, 1, "the first item's timer serves every batch after it");
  // The two left over still go within the wait.
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.deepEqual(batches.at(-1), [400, 401]);
  assert.equal(queue.size, 0);
});
