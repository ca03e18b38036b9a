/**
 * The Deno workarounds (server/deno_workarounds.ts): what each does, and, for each, a test that
 * Deno 2.9 still shows the problem it works around. Those fail once a Deno release fixes it: the
 * failure message says which workaround can then go.
 */
import assert from "node:assert/strict";
import { InFlight } from "../../server/deno_workarounds.ts";
import { loadConfig } from "../../server/lifecycle/config.ts";
import { servingArgs } from "../../server/lifecycle/serve_args.ts";
import { collectOutput, inheritedEnv, startTaskEnv } from "../support/server.ts";

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

// -- 1. server.shutdown() and bodies still arriving (denoland/deno#36809) --------------------

Deno.test("Deno still cuts a request body in flight on server.shutdown() (denoland/deno#36809)", async () => {
  const started = Promise.withResolvers<void>();
  const outcome = Promise.withResolvers<string>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    started.resolve();
    try {
      outcome.resolve(`read ${await req.text()}`);
    } catch (error) {
      outcome.resolve(error instanceof Error ? error.name : String(error));
    }
    return new Response("ok");
  });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  const head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345";
  await conn.write(new TextEncoder().encode(head));
  await started.promise;
  const stopped = server.shutdown();
  // The rest of the body is never sent: a Deno that drained would still be reading when the
  // wait gives up, whatever the machine's speed; the client closing then ends the read.
  let timer: ReturnType<typeof setTimeout> | undefined;
  const gaveUp = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve("still reading after 10 s"), 10_000);
  });
  const cut = await Promise.race([outcome.promise, gaveUp]);
  clearTimeout(timer);
  conn.close();
  await stopped;
  assert.equal(
    cut,
    "BadResource",
    "Deno now drains bodies on shutdown(): InFlight in deno_workarounds.ts can go",
  );
});

// -- 2. deno serve's own SIGTERM listener (denoland/deno#32862) -------------------------------

Deno.test("deno serve still cuts an upload in flight at SIGTERM (denoland/deno#32862)", async () => {
  const dir = await Deno.makeTempDir();
  const module = `${dir}/serve.ts`;
  await Deno.writeTextFile(
    module,
    `export default {
  async fetch(req: Request) {
    console.log("started");
    try {
      console.log("read " + await req.text());
    } catch (error) {
      console.log("cut " + (error as Error).name);
    }
    return new Response("ok");
  },
};
`,
  );
  const child = spawn(Deno.execPath(), [
    "serve",
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--allow-net=127.0.0.1",
    module,
  ]);
  let onText = () => {};
  const { text, done } = collectOutput(child, () => onText());
  const seen = (pattern: RegExp, timeoutMs: number) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      onText = () => {
        if (pattern.test(text())) {
          clearTimeout(timer);
          resolve(true);
        }
      };
      onText();
    });
  let conn: Deno.Conn | undefined;
  try {
    assert.ok(await seen(/Listening on http:\/\/127\.0\.0\.1:\d+/, 10_000), text());
    const port = Number(/127\.0\.0\.1:(\d+)/.exec(text())![1]);
    conn = await Deno.connect({ hostname: "127.0.0.1", port });
    const head = "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n12345";
    await conn.write(new TextEncoder().encode(head));
    assert.ok(await seen(/started/, 10_000), text());
    child.kill("SIGTERM");
    // Deno's listener shuts the server down at once: the read fails. The rest of the body is
    // never sent, so a Deno that waited for it would still be reading when the wait gives up.
    await seen(/cut|read/, 10_000);
    assert.match(
      text(),
      /cut BadResource/,
      "deno serve now drains on SIGTERM: holdServeShutdown in deno_workarounds.ts can go",
    );
  } finally {
    conn?.close();
    await killProbe(child, done, dir);
  }
});

// -- 3. An accept error ends Deno.serve's accept loop (denoland/deno#10148) ------------------

Deno.test("Deno.serve still stops accepting for good when out of descriptors (denoland/deno#10148)", async () => {
  const dir = await Deno.makeTempDir();
  const script = `${dir}/listen.ts`;
  await Deno.writeTextFile(
    script,
    `const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log("port " + port) },
  () => new Response("ok"),
);
server.finished.then(() => console.log("finished"), () => console.log("accept loop ended"));
`,
  );
  const child = spawn("bash", [
    "-c",
    `ulimit -n 60; exec "${Deno.execPath()}" run --allow-net=127.0.0.1 ${script}`,
  ]);
  const { text, done } = collectOutput(child, () => {});
  const conns: Deno.Conn[] = [];
  try {
    await until(() => /port \d+/.test(text()), "the listen line", text);
    const port = Number(/port (\d+)/.exec(text())![1]);
    for (let i = 0; i < 100; i++) {
      try {
        conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
      } catch {
        break;
      }
    }
    await until(
      () => /accept loop ended/.test(text()),
      "Deno.serve to end its accept loop (if it never does, listen() in deno_workarounds.ts can go)",
      text,
    );
  } finally {
    for (const conn of conns) conn.close();
    await killProbe(child, done, dir);
  }
});

// The workaround itself, end to end: the real main.ts under a descriptor limit.
const FD_LIMIT = 200;
const SILENT = 260;

Deno.test("out of descriptors: the server stays up, logs once, and serves when some close", async () => {
  // The server takes a free port itself (PORT=0) and says which. Listening again needs a grant
  // for that port, and a grant for port 0 covers only port 0 (production's names its fixed
  // PORT): the grant here is the host's, any port.
  const env = { PORT: "0", HOST: "127.0.0.1" };
  const serving = servingArgs(loadConfig(env));
  const grant = serving.indexOf("--allow-net=127.0.0.1:0");
  assert.ok(grant >= 0, serving.join(" "));
  serving[grant] = "--allow-net=127.0.0.1";
  const args = serving.map((a) => `'${a}'`).join(" ");
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
    const port = await new Promise<number>((resolve, reject) => {
      onText = () => {
        const listening = /Listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(text());
        if (listening) resolve(Number(listening[1]));
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

// A probe process with a clean environment and its output piped.
function spawn(command: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(command, {
    args,
    env: { ...inheritedEnv(), NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

// Ends a probe: kills it, waits for its output to close, removes its scratch directory.
async function killProbe(
  child: Deno.ChildProcess,
  output: Promise<unknown>,
  dir: string,
): Promise<void> {
  try {
    child.kill("SIGKILL");
  } catch { /* already exited */ }
  await child.status;
  await output;
  await Deno.remove(dir, { recursive: true });
}
