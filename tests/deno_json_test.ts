/**
 * deno.json repeats facts the code owns; these tests keep the copies equal, so a variable added
 * to the configuration cannot be forgotten in a task's permissions.
 */
import assert from "node:assert/strict";
import { LAUNCHER_ENV_VARIABLES } from "../server/lifecycle/config.ts";

const tasks: Record<string, { command: string }> = JSON.parse(
  await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
).tasks;

Deno.test("deno.json: start and start:parallel may read exactly the launcher's variables", () => {
  for (const name of ["start", "start:parallel"]) {
    const lists = [...tasks[name].command.matchAll(/--allow-env=(\S+)/g)].map((m) => m[1]);
    assert.equal(lists.length, 1, `${name}: one scoped --allow-env`);
    assert.deepEqual(lists[0].split(",").sort(), [...LAUNCHER_ENV_VARIABLES].sort(), name);
  }
});

Deno.test("deno.json: no production task can turn on dev features", () => {
  for (const name of ["start", "start:parallel"]) {
    assert.doesNotMatch(tasks[name].command, /DEV_MODE|DEV_INBOX/, name);
  }
});
