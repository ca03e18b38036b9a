import assert from "node:assert/strict";
import { type Linked, LinkedList } from "../../server/linked_list.ts";

interface Entry extends Linked<Entry> {
  readonly name: string;
}

const entry = (name: string): Entry => ({
  name,
  older: undefined,
  newer: undefined,
  listed: false,
});

// Oldest to newest, by walking the links.
function names(list: LinkedList<Entry>): string[] {
  const out: string[] = [];
  for (let at = list.oldest; at !== undefined; at = at.newer) out.push(at.name);
  return out;
}

Deno.test("LinkedList keeps entries oldest to newest through removals at either end and inside", () => {
  const list = new LinkedList<Entry>();
  const [a, b, c, d] = ["a", "b", "c", "d"].map(entry);
  for (const e of [a, b, c, d]) list.append(e);
  assert.deepEqual(names(list), ["a", "b", "c", "d"]);
  assert.equal(list.size, 4);
  list.remove(b);
  list.remove(b); // not listed any more: nothing changes
  assert.deepEqual(names(list), ["a", "c", "d"]);
  list.remove(a);
  list.remove(d);
  assert.deepEqual(names(list), ["c"]);
  assert.equal(c.older, undefined);
  assert.equal(c.newer, undefined);
  list.remove(c);
  assert.equal(list.oldest, undefined);
  assert.equal(list.size, 0);
  // Empty, it takes entries again.
  list.append(b);
  list.append(b); // already listed: nothing changes
  assert.deepEqual(names(list), ["b"]);
  assert.equal(list.size, 1);
});

Deno.test("LinkedList.moveToNewest puts an entry last, wherever it was", () => {
  const list = new LinkedList<Entry>();
  const [a, b, c] = ["a", "b", "c"].map(entry);
  for (const e of [a, b, c]) list.append(e);
  list.moveToNewest(a);
  assert.deepEqual(names(list), ["b", "c", "a"]);
  list.moveToNewest(c);
  assert.deepEqual(names(list), ["b", "a", "c"]);
  list.moveToNewest(c); // already the newest
  assert.deepEqual(names(list), ["b", "a", "c"]);
  assert.equal(list.size, 3);
  // Walking back from the newest agrees with walking forward.
  const back: string[] = [];
  for (let at: Entry | undefined = c; at !== undefined; at = at.older) back.push(at.name);
  assert.deepEqual(back, ["c", "a", "b"]);
});

Deno.test("an entry that left the list points at nothing, so a dead one keeps nothing alive", () => {
  const list = new LinkedList<Entry>();
  const entries = ["a", "b", "c"].map(entry);
  for (const e of entries) list.append(e);
  assert.equal(entries[1].older, entries[0]);
  assert.equal(entries[1].newer, entries[2]);
  for (const e of entries) list.remove(e);
  for (const e of entries) {
    assert.equal(e.older, undefined);
    assert.equal(e.newer, undefined);
    assert.equal(e.listed, false);
  }
});
