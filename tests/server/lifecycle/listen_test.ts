/**
 * Running out of file descriptors never ends the server: the real main.ts under `ulimit -n 200`
 * is flooded with more silent connections than it may open; it logs the outage once, keeps
 * running, and answers GET / again once some of them close.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { servingArgs } from "../../../server/lifecycle/serve_args.ts";
import { collectOutput, inheritedEnv, startTaskEnv } from "../../support/server.ts";

const FD_LIMIT = 200;
const SILENT = 260;

Deno.test("out of descriptors: the server stays up, logs once, and serves when some close", async () => {
  // A fixed port, as in production: the server's permission is for that port, and listening
  // again needs it (with PORT=0 it would only be allowed port 0).
  const port = freePort();
  const env = { PORT: String(port), HOST: "127.0.0.1" };
  const args = servingArgs(loadConfig(env)).map((a) => `'${a}'`).join(" ");
  const child = new Deno.Command("bash", {
    args: ["-c", `ulimit -n ${FD_LIMIT}; exec "${Deno.execPath()}" ${args}`],
    env: { ...inheritedEnv(), ...startTaskEnv(), ...env, NO_COLOR: "1" },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let onText = () => {};
  const { text, done } = collectOutput(child, () => onText());
  const conns: Deno.Conn[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      onText = () => {
        if (/Listening on http:\/\/127\.0\.0\.1:\d+\//.test(text())) resolve();
      };
      child.status.then(() => reject(new Error(`exited:\n${text()}`)));
    });

    // More connections than the process may hold; once the listener gives up, connecting fails.
    for (let i = 0; i < SILENT; i++) {
      try {
        conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
      } catch {
        break;
      }
    }
    await until(() => /accepting connections failed/.test(text()), "the outage line", text);
    assert.ok(conns.length < SILENT || /Too many open files/.test(text()), text());

    // Free most of them: the server listens again and answers.
    for (const conn of conns.splice(0, conns.length - 50)) conn.close();
    let status = 0;
    await until(
      async () => {
        status = await fetch(`http://127.0.0.1:${port}/healthz`, {
          signal: AbortSignal.timeout(1_000),
        }).then(async (res) => {
          await res.body?.cancel();
          return res.status;
        }, () => 0);
        return status === 200;
      },
      "GET /healthz to answer again",
      text,
    );
    assert.equal((text().match(/accepting connections failed/g) ?? []).length, 1, text());
    assert.doesNotMatch(text(), /Uncaught|error: /, "no crash");
  } finally {
    for (const conn of conns) conn.close();
    try {
      child.kill("SIGTERM");
    } catch { /* already exited */ }
    const status = await child.status;
    await child.stdin.close().catch(() => {});
    await done;
    assert.equal(status.code, 0, text());
  }
});

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  output: () => string,
): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}:\n${output()}`);
}
