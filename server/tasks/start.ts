/**
 * `deno task start`'s launcher: validate the configuration and deno.json's `permissions.app`,
 * then run the server in a child process with exactly the permissions they call for
 * (serve_args.ts): `main.ts`, or with `--parallel` (`deno task start:parallel`)
 * `deno serve --parallel serve.ts`. A static task cannot know them: they depend on PORT, HOST,
 * the DSNs and an outbound proxy. This process needs `--allow-run` to start the server (and
 * `ps`), which already lets it start anything, so it reads the environment unscoped; the
 * server it starts holds only what it needs.
 *
 * It forwards SIGINT/SIGTERM to the server, and sends SIGTERM itself when the command that
 * started it goes away without a word (npx killed: see parent_gone.ts). If this process is
 * killed outright, the server sees its stdin close and shuts down the same way.
 */
import { DEV_VARIABLES, loadConfig } from "../lifecycle/config.ts";
import { proxyHosts, readAppPermissions } from "../lifecycle/permissions.ts";
import { readProcessTable, taskAncestors, watchAncestors } from "../lifecycle/parent_gone.ts";
import { servingArgs } from "../lifecycle/serve_args.ts";
import { STOP_SIGNALS } from "../lifecycle/shutdown.ts";
import { exitOnStartupError } from "../lifecycle/startup_error.ts";

let args: string[];
try {
  const env = Deno.env.toObject();
  // The dev switches are never the launcher's to pass on.
  for (const name of DEV_VARIABLES) delete env[name];
  const config = loadConfig(env);
  args = servingArgs(config, await readAppPermissions(), {
    mode: Deno.args.includes("--parallel") ? "parallel" : "run",
    proxies: proxyHosts(env),
  });
} catch (error) {
  exitOnStartupError(error);
}

// Listed before the server starts, so `ps` is never a second child next to it.
const ancestors = taskAncestors(await readProcessTable(), Deno.ppid);

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
