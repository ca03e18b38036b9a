/**
 * deno.json's production tasks: short (the launcher computes the server's flags, so a start
 * echoes one short line), and unable to turn on dev features.
 */
import assert from "node:assert/strict";

const tasks: Record<string, { command: string }> = JSON.parse(
  await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
).tasks;

Deno.test("deno.json: start and start:parallel are one short line, the same launcher", () => {
  for (const name of ["start", "start:parallel"]) {
    assert.ok(tasks[name].command.length < 200, `${name}: ${tasks[name].command}`);
    assert.match(
      tasks[name].command,
      /&& NODE_ENV=production deno run .* server\/tasks\/start\.ts/,
    );
  }
  assert.equal(tasks["start:parallel"].command, `${tasks.start.command} --parallel`);
});

Deno.test("deno.json: no production task can turn on dev features", () => {
  for (const name of ["start", "start:parallel"]) {
    assert.doesNotMatch(tasks[name].command, /DEV_MODE|DEV_INBOX/, name);
  }
});
