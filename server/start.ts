/**
 * `deno task start`'s launcher: validate the configuration, then run `main.ts` in a child
 * process with exactly the permissions that configuration needs (see serve_args.ts). The
 * permission list depends on PORT, HOST and the DSNs, which a static task cannot know; this
 * process holds `--allow-run` only to start the server, and forwards signals to it.
 */
import { loadConfig, readEnv } from "./config.ts";
import { servingArgs } from "./serve_args.ts";
import { exitOnStartupError } from "./startup.ts";

let args: string[];
try {
  args = servingArgs(loadConfig(readEnv()));
} catch (error) {
  exitOnStartupError(error);
}

const server = new Deno.Command(Deno.execPath(), { args, stdin: "inherit" }).spawn();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(signal, () => {
    try {
      server.kill(signal);
    } catch {
      // Already exited; its status ends this process below.
    }
  });
}
Deno.exit((await server.status).code);
