/**
 * The server never outlives what started it: the launcher killed outright (the server's stdin
 * closes), the launcher's parent killed, and the npx case, where a `sh -c "deno task start"`
 * above `deno task` dies and nobody is told.
 */
import assert from "node:assert/strict";
import { taskAncestors } from "../../../server/lifecycle/parent_gone.ts";
import {
  collectOutput,
  inheritedEnv,
  startServer,
  startTaskArgs,
  startTaskEnv,
} from "../../support/server.ts";
import { allExited, descendants, exited, onlyChild, processes } from "../../support/processes.ts";

Deno.test("taskAncestors: the parent, then the task wrappers above it, never the shell or init", () => {
  const npx = [
    "  1     0 /sbin/init",
    " 90     1 -bash",
    "100    90 npm exec deno@2.9.6 task start",
    "101   100 sh -c 'deno' task start",
    "102   101 deno task start",
    "103   102 /usr/bin/deno run --allow-env=NODE_ENV --allow-run server/tasks/start.ts",
  ].join("\n");
  assert.deepEqual(taskAncestors(npx, 102), [102, 101, 100]);

  // `nohup deno task start &` typed in a shell: the shell may log out, the task lives on.
  const nohup = " 90 1 -bash\n102 90 deno task start\n";
  assert.deepEqual(taskAncestors(nohup, 102), [102]);
  // Run directly, or under a supervisor: only the parent.
  assert.deepEqual(taskAncestors(" 90 1 -bash\n", 90), [90]);
  assert.deepEqual(taskAncestors("", 55), [55], "ps missing: the parent");
  // npx as the container's first process: pid 1's end kills the container anyway.
  const docker = "1 0 npm exec deno task start\n7 1 deno task start\n";
  assert.deepEqual(taskAncestors(docker, 7), [7]);
  assert.deepEqual(taskAncestors(docker, 1), []);
});

Deno.test("the launcher killed outright: the server sees its stdin close and stops gracefully", async () => {
  const server = await startServer();
  const serverPid = await onlyChild(server.process.pid);
  const status = await server.stop("SIGKILL");
  assert.equal(status.signal, "SIGKILL");
  await exited(serverPid);
  assert.match(server.output(), /server: stopping \(0 requests in flight\)/);
});

/** Start `script` (a shell command line) with the start task's environment; resolve its URL. */
async function startUnderShell(script: string) {
  const child = new Deno.Command("sh", {
    args: ["-c", script],
    env: { ...inheritedEnv(), ...startTaskEnv(), PORT: "0", HOST: "127.0.0.1", NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let found = () => {};
  const { text, done } = collectOutput(child, () => found());
  const listening = new Promise<void>((resolve) =>
    found = () => {
      if (/Listening on http:\/\/127\.0\.0\.1:\d+\//.test(text())) resolve();
    }
  );
  await Promise.race([
    listening,
    child.status.then(() => {
      throw new Error(`exited early:\n${text()}`);
    }),
  ]);
  return { child, text, done };
}

for (
  const [name, script] of [
    // The launcher's own parent dies.
    ["the launcher's parent", `"${Deno.execPath()}" ${startTaskArgs().join(" ")}; true`],
    // As under npx: the `sh -c` above `deno task` dies; `deno task` is left running, untold.
    ["the sh -c above deno task (the npx case)", `"${Deno.execPath()}" task start; true`],
  ] as const
) {
  Deno.test(`${name} killed: no server is left behind`, async () => {
    const { child, text, done } = await startUnderShell(script);
    const left = descendants(await processes(), child.pid);
    assert.ok(left.length >= 2, "the launcher and the server");
    child.kill("SIGKILL");
    await child.status;
    await allExited(left);
    await done;
    assert.match(text(), /the command that started the server has ended/);
    assert.match(text(), /server: stopping/);
  });
}
