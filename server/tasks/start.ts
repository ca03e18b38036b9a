/**
 * `deno task start`'s launcher: validate the configuration, then run `main.ts` in a child
 * process with exactly the permissions that configuration needs (see serve_args.ts). With
 * `--parallel` (`deno task start:parallel`) the child is `deno serve --parallel serve.ts`
 * instead, with the same permissions and address. The
 * permission list depends on PORT, HOST, the DSNs and an outbound proxy, which a static task
 * cannot know; this
 * process holds `--allow-run` only to start the server (and to list its ancestors with `ps`).
 *
 * It forwards SIGINT/SIGTERM to the server, and sends SIGTERM itself when the command that
 * started it goes away without a word (npx killed: see parent_gone.ts). If this process is
 * killed outright, the server sees its stdin close and shuts down the same way.
 */
import { loadConfig, PROXY_VARIABLES, readEnv } from "../lifecycle/config.ts";
import { proxyHosts } from "../lifecycle/permissions.ts";
import {
  parseProcessTable,
  readProcessTable,
  taskAncestors,
  watchAncestors,
} from "../lifecycle/parent_gone.ts";
import { servingArgs } from "../lifecycle/serve_args.ts";
import { STOP_SIGNALS } from "../lifecycle/shutdown.ts";
import { exitOnStartupError } from "../lifecycle/startup_error.ts";

let args: string[];
try {
  const proxies = proxyHosts(Object.fromEntries(PROXY_VARIABLES.map((n) => [n, Deno.env.get(n)])));
  args = servingArgs(
    loadConfig(readEnv()),
    Deno.args.includes("--parallel") ? "parallel" : "run",
    proxies,
  );
} catch (error) {
  exitOnStartupError(error);
}

// Listed before the server starts, so `ps` is never a second child next to it.
const ancestors = taskAncestors(parseProcessTable(await readProcessTable()), Deno.ppid);

// stdin is the server's lifeline: a pipe that nothing is written to and that only closes when
// this process ends.
const server = new Deno.Command(Deno.execPath(), { args, stdin: "piped" }).spawn();
const forward = (signal: Deno.Signal) => {
  try {
    server.kill(signal);
  } catch {
    // Already exited; its status ends this process below.
  }
};
for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, () => forward(signal));
const stopWatching = watchAncestors(ancestors, () => {
  console.error("launcher: the command that started the server has ended; stopping the server");
  forward("SIGTERM");
});
const { code } = await server.status;
stopWatching();
Deno.exit(code);
