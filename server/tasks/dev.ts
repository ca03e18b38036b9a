/** `deno task dev`: a save rebuilds, restarts main.ts (production's permissions plus dev's) and
 * reloads the page; while broken, this process (loaded before any edit) serves the error page. It
 * stops, with the server and esbuild, once the command that started it has ended. */
import * as esbuild from "esbuild";
import { incrementalBuild } from "../build/client_build.ts";
import { exitOnStartupError, loadConfig } from "../lifecycle/config.ts";
import { proxyHosts, readAppPermissions, servingArgs } from "../lifecycle/serve_args.ts";
import { listeningUrl } from "../lifecycle/listen_address.ts";
import { onStopRequest } from "../lifecycle/shutdown.ts";
import { readTaskAncestors, watchAncestors } from "../lifecycle/parent_gone.ts";
import { denoFailure, describe, errorResponse, type Failure } from "../dev/error_page.ts";
import { liveReload } from "../dev/live_reload.ts";

// main.ts and deno.json through the project's folder: an editor that saves by renaming a new file
// over the old one leaves a watch on the file itself watching nothing.
const watched = (path: string) =>
  /^(client\/|server\/|main\.ts$|deno\.json$)/.test(path.slice(Deno.cwd().length + 1));
// Editors save in bursts (write, rename, chmod): build once the burst is over.
const DEBOUNCE_MS = 50;
// Enough of the server's stderr to hold Deno's error block and its stack.
const KEPT_STDERR_CHARS = 32_000;
const ROOT = `file://${Deno.cwd()}/`;

const env = {
  DEV_MODE: "true",
  NODE_ENV: "development",
  // Dev pages show monitoring data: this machine only, unless HOST says otherwise.
  HOST: Deno.env.get("HOST") || "127.0.0.1",
  // The bundle links its source maps; the browser's devtools fetch them.
  SERVE_SOURCE_MAPS: Deno.env.get("SERVE_SOURCE_MAPS") || "true",
  PORT: Deno.env.get("PORT") || "8000",
};
const config = await Promise.try(() => {
  const config = loadConfig({ ...Deno.env.toObject(), ...env });
  if (config.port !== 0) return config;
  // Chosen once, so every restart and the error page answer on the same port.
  using probe = Deno.listen({ hostname: config.host, port: 0 });
  env.PORT = String(probe.addr.port);
  return loadConfig({ ...Deno.env.toObject(), ...env });
}).catch(exitOnStartupError);
const address = { hostname: config.host, port: config.port };

/** Production's flags, deno.json's app grants and the app settings' names, as they are now. */
async function serverArgs(): Promise<string[]> {
  // A fresh copy of the module each time; a broken one is the server's to report.
  const settings = await import(`${ROOT}server/settings.ts?at=${performance.now()}`)
    .then((module) => Object.keys(module.settings ?? {}), () => []);
  const proxies = proxyHosts(Deno.env.toObject());
  return servingArgs(config, await readAppPermissions(), { mode: "dev", proxies, settings });
}

// Listed before esbuild and the server start, so `ps` is never a child next to them.
const ancestors = await readTaskAncestors();
const builder = await incrementalBuild();
// What answers on the port: the server, or the error page in its place.
let current: { stop(): Promise<void> } | undefined;
// One step at a time, in order: a save's restart, a crash's error page.
let queue = Promise.resolve();
const serially = (step: () => void | Promise<void>) =>
  queue = queue.then(step).catch((error) => console.error("dev:", error));

// Cleared before it stops, so a server stopped on purpose is never taken for one that crashed.
async function stopCurrent(): Promise<void> {
  const stopping = current;
  current = undefined;
  await stopping?.stop();
}

async function restart(): Promise<void> {
  await stopCurrent();
  try {
    await builder.rebuild();
  } catch (error) {
    // esbuild has printed each error with its file, line and code frame.
    const errors = (error as esbuild.BuildFailure).errors ?? [];
    const at = errors[0]?.location;
    return serveError({
      title: `Build failed (${errors.length} error${errors.length === 1 ? "" : "s"})`,
      where: at ? `${at.file}:${at.line}:${at.column}` : undefined,
      detail: errors.length
        ? (await esbuild.formatMessages(errors, { kind: "error" })).join("")
        : `${error}`,
    });
  }
  const args = await serverArgs().catch((error: Error) => error);
  if (args instanceof Error) return serveError({ title: args.message, detail: `${args}` });
  startServer(args);
}

function startServer(args: string[]): void {
  // stdin is the server's lifeline: if this process dies, the server sees it close and stops.
  const child = new Deno.Command(Deno.execPath(), { args, env, stdin: "piped", stderr: "piped" })
    .spawn();
  // Nothing to drain in dev, and an open reload stream would hold a graceful stop.
  const server = {
    async stop() {
      try {
        child.kill("SIGKILL");
      } catch { /* it stopped on its own */ }
      await child.status;
    },
  };
  current = server;
  // Shown as it comes (Deno prints an error once), and kept to say why the server stopped.
  let stderr = "";
  const read = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of child.stderr) {
      for (let n = 0; n < chunk.length;) n += Deno.stderr.writeSync(chunk.subarray(n));
      stderr = (stderr + decoder.decode(chunk, { stream: true })).slice(-KEPT_STDERR_CHARS);
    }
  })();
  child.status.then(async () => {
    await read;
    await child.stdin.close().catch(() => {});
    serially(() => current === server ? serveError(denoFailure(stderr, ROOT)) : undefined);
  });
}

function serveError(failure: Failure): void {
  const closed = new AbortController();
  const reload = liveReload(crypto.randomUUID(), closed.signal);
  const shown = `dev: ${describe(failure)}; ${listeningUrl(address)} shows it until the next save`;
  const onListen = () => console.error(shown);
  const handler = (req: Request) => reload(req) ?? errorResponse(req, failure);
  const server = Deno.serve({ ...address, onListen }, handler);
  current = { stop: () => (closed.abort(), server.shutdown()) };
}

let pending = false;
const schedule = () => {
  if (pending) return;
  pending = true;
  serially(() => (pending = false, restart()));
};
const watchers = [Deno.watchFs(["client", "server"]), Deno.watchFs(".", { recursive: false })];
console.log("dev: watching client/, server/, main.ts, deno.json: a save restarts, reloads");
schedule();
const stop = onStopRequest(async () => {
  watchers.forEach((watcher) => watcher.close());
  await stopCurrent();
  await builder.dispose();
  Deno.exit(0);
});
// Under npx, a SIGTERM ends npx and its `sh` but leaves `deno task`, and so this, untold.
watchAncestors(ancestors, () => {
  console.error("dev: the command that started it has ended; stopping");
  stop();
});
let timer: ReturnType<typeof setTimeout> | undefined;
await Promise.all(watchers.map(async (watcher) => {
  for await (const { kind, paths } of watcher) {
    if (kind === "access" || !paths.some(watched)) continue;
    clearTimeout(timer);
    timer = setTimeout(schedule, DEBOUNCE_MS);
  }
}));
