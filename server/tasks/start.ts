/**
 * `deno task start`'s launcher: validate config and deno.json's `permissions.app`, run the server
 * with exactly the permissions they and the app's settings need (serve_args.ts), forward stop
 * signals, and SIGTERM it when the command that started it goes away (parent_gone.ts).
 */
import { DEV_VARIABLES, exitOnStartupError, loadConfig } from "../lifecycle/config.ts";
import { proxyHosts, readAppPermissions, servingArgs } from "../lifecycle/serve_args.ts";
import { readTaskAncestors, watchAncestors } from "../lifecycle/parent_gone.ts";
import { STOP_SIGNALS } from "../lifecycle/shutdown.ts";
import { settings } from "../settings.ts";

const env = Deno.env.toObject();
// The dev switches are never the launcher's to pass on.
for (const name of DEV_VARIABLES) delete env[name];
const args = await readAppPermissions().then((app) =>
  servingArgs(loadConfig(env), app, {
    mode: Deno.args.includes("--parallel") ? "parallel" : "run",
    proxies: proxyHosts(env),
    settings: Object.keys(settings),
  })
).catch(exitOnStartupError);

// Listed before the server starts, so `ps` is never a second child next to it.
const ancestors = await readTaskAncestors();

// stdin is the server's lifeline: a pipe nothing is written to, closed only when this ends.
const server = new Deno.Command(Deno.execPath(), { args, stdin: "piped" }).spawn();
const forward = (signal: Deno.Signal) => {
  try {
    server.kill(signal);
  } catch { /* already exited; its status ends this process below */ }
};
for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, () => forward(signal));
watchAncestors(ancestors, () => {
  console.error("launcher: the command that started the server has ended; stopping the server");
  forward("SIGTERM");
});
Deno.exit((await server.status).code);
