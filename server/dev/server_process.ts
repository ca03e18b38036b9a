/**
 * The dev server as a child of the runner (server/tasks/dev.ts): `deno run main.ts` in dev mode, its
 * output relayed to the terminal as it comes (so an error is printed once, by Deno), and read
 * for two facts: the port it listens on, and, if it exits on its own, why.
 */
import { DEV_VARIABLES, SERVER_ENV_VARIABLES } from "../lifecycle/config.ts";
import { STDIN_LIFELINE_FLAG } from "../constants.ts";
import { parseServerFailure } from "./failure.ts";
import type { BuildError } from "./reload.ts";

/**
 * Flags of the dev server: those of `deno task start`, plus the dev switches, and reading client/
 * (the dev client script) and server/ (boot.ts loads the dev modules from there at run time).
 */
export const DEV_SERVER_ARGS: readonly string[] = [
  "run",
  "--allow-net",
  "--allow-read=static,client,server",
  `--allow-env=${[...SERVER_ENV_VARIABLES, ...DEV_VARIABLES].join(",")}`,
  "main.ts",
];

// How long the server may take to drain before it is killed; a restart waits for it.
const STOP_TIMEOUT_MS = 3_000;
// Enough output to hold Deno's error block and stack; older lines are dropped.
const KEPT_OUTPUT_CHARS = 32_000;
const LISTENING = /Listening on \S+:(\d+)\//;

/** How a start ended: listening on a port, or exited first. */
export type StartOutcome =
  | { readonly listening: number }
  | { readonly failure: BuildError };

/** A running (or failed) dev server process. */
export interface ServerProcess {
  /** Listening, or the reason it exited before it did. */
  readonly started: Promise<StartOutcome>;
  /** Why it exited on its own after listening; never settles if it is stopped. */
  readonly crashed: Promise<BuildError>;
  /** Shut it down gracefully (SIGTERM), killing it if that takes too long. */
  stop(): Promise<void>;
}

/** What the child is started with. */
export interface ServerProcessOptions {
  readonly port: number;
  /** The project's `file:///.../` URL, to tell its frames from dependencies'. */
  readonly root: string;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * Start the dev server on `port`. Its stdin is a pipe held open by the runner: if the runner
 * dies, the server sees it close and stops (no orphan holding the port).
 */
export function spawnServer(options: ServerProcessOptions): ServerProcess {
  const child = new Deno.Command(Deno.execPath(), {
    args: [...DEV_SERVER_ARGS, STDIN_LIFELINE_FLAG],
    env: { ...options.env, PORT: String(options.port) },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const listening = Promise.withResolvers<number>();
  const relay = async (from: ReadableStream<Uint8Array>, to: typeof Deno.stdout) => {
    const decoder = new TextDecoder();
    for await (const chunk of from) {
      await to.write(chunk);
      output = (output + decoder.decode(chunk, { stream: true })).slice(-KEPT_OUTPUT_CHARS);
      const match = LISTENING.exec(output);
      if (match) listening.resolve(Number(match[1]));
    }
  };
  const relayed = Promise.all([relay(child.stdout, Deno.stdout), relay(child.stderr, Deno.stderr)]);
  let stopping = false;
  const exited = child.status.then(async (status) => {
    await relayed;
    await child.stdin.close().catch(() => {});
    return parseServerFailure(output, options.root, status.signal === null ? status.code : null);
  });
  const started = Promise.race([
    listening.promise.then((port) => ({ listening: port })),
    exited.then((failure) => ({ failure })),
  ]);
  const crashed = new Promise<BuildError>((resolve) => {
    exited.then((failure) => {
      if (!stopping) resolve(failure);
    });
  });
  return {
    started,
    crashed,
    async stop() {
      stopping = true;
      signal(child, "SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise((resolve) => timer = setTimeout(resolve, STOP_TIMEOUT_MS));
      if (await Promise.race([child.status.then(() => false), late.then(() => true)])) {
        signal(child, "SIGKILL");
      }
      clearTimeout(timer);
      await exited;
    },
  };
}

function signal(child: Deno.ChildProcess, name: Deno.Signal): void {
  try {
    child.kill(name);
  } catch { /* already exited */ }
}
