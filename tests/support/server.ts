/**
 * Start the real server as `deno task start` does (its launcher, server/tasks/start.ts, which runs
 * main.ts with the permissions the configuration needs) on 127.0.0.1, port 0, and read the URL
 * from its start-up line.
 */
import denoJson from "../../deno.json" with { type: "json" };
import { isUpToDate } from "../../server/build/client_build.ts";

/** A running server and what it printed; disposing it stops it (`await using`). */
export interface RunningServer extends AsyncDisposable {
  readonly url: string;
  readonly process: Deno.ChildProcess;
  /** Everything printed to stdout and stderr so far. */
  output(): string;
  /** Send a signal and wait for the exit status. */
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/** The `deno run ...` arguments of the start task's serving step (after the build step). */
export function startTaskArgs(): string[] {
  const command = denoJson.tasks.start.command;
  const serving = command.slice(command.lastIndexOf("&&") + 2).trim().split(/\s+/);
  // serving = ["NODE_ENV=production", "deno", "run", ...flags, "server/tasks/start.ts"]
  return serving.slice(serving.indexOf("deno") + 1);
}

/** The environment variables the start task sets before `deno`. */
export function startTaskEnv(): Record<string, string> {
  const command = denoJson.tasks.start.command;
  const serving = command.slice(command.lastIndexOf("&&") + 2).trim().split(/\s+/);
  const assignments = serving.slice(0, serving.indexOf("deno"));
  return Object.fromEntries(assignments.map((a) => a.split("=", 2) as [string, string]));
}

let buildChecked: Promise<void> | undefined;

/**
 * Throw unless static/build was built from the sources as they are now. The server runs what the
 * build made (the pages), so after an edit a test run without a build
 * would test the old code. `deno task test` builds first; `deno test FILE` does not.
 */
export function assertBuildCurrent(): Promise<void> {
  buildChecked ??= isUpToDate().then((current) => {
    if (!current) {
      throw new Error(
        "static/build is missing or older than the sources, so the server would run an old " +
          "build: run `deno task build` first, or run the tests with `deno task test`",
      );
    }
  });
  return buildChecked;
}

/** Start tests/fixtures/serve_app.ts (the app without the launcher, its memory the server's own) as
 * {@link startServer} does. */
export function startFixtureServer(env: Record<string, string> = {}): Promise<RunningServer> {
  const args = ["run", "--allow-net=127.0.0.1", "--allow-read", "--allow-env"];
  return startServer(env, { args: [...args, "tests/fixtures/serve_app.ts"] });
}

/**
 * Run the server as `deno task start` does (in `cwd`, a project copy, if given) and wait until it
 * listens (or exits, which throws with its output).
 */
export async function startServer(
  env: Record<string, string> = {},
  options: { args?: string[]; cwd?: string } = {},
): Promise<RunningServer> {
  await assertBuildCurrent();
  const child = new Deno.Command(Deno.execPath(), {
    args: options.args ?? startTaskArgs(),
    cwd: options.cwd,
    env: { ...baseEnv(), ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let onText = () => {};
  const { text: output, done } = collectOutput(child, () => onText());
  const listening = new Promise<string | null>((resolve) => {
    onText = () => {
      const match = /Listening on (http:\/\/\S+\/) /.exec(output());
      if (match) resolve(match[1]);
    };
    child.status.then(() => resolve(null));
  });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<null>((resolve) => timer = setTimeout(() => resolve(null), 15_000));
  const url = await Promise.race([listening, timeout]);
  clearTimeout(timer);
  if (url === null) {
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
    await child.status;
    await done;
    throw new Error(`server did not start:\n${output()}`);
  }
  const stop = async (signal: Deno.Signal = "SIGTERM") => {
    try {
      child.kill(signal);
    } catch { /* already gone */ }
    const status = await child.status;
    await done;
    return status;
  };
  return {
    url,
    process: child,
    output,
    stop,
    async [Symbol.asyncDispose]() {
      await stop();
    },
  };
}

/** Run `main.ts` (in `cwd`, a project copy, if given) to completion (for start-up failures) and
 * return its exit code and output. */
export async function runServerToExit(
  env: Record<string, string>,
  args: string[] = startTaskArgs(),
  cwd?: string,
): Promise<{ code: number; output: string }> {
  await assertBuildCurrent();
  const result = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    env: { ...baseEnv(), ...env },
    clearEnv: true,
    stdin: "null",
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: result.code, output: decode(result.stdout) + decode(result.stderr) };
}

/**
 * Collect a child's stdout and stderr as text, calling `onText` after each chunk; `done`
 * resolves when both streams have ended.
 */
export function collectOutput(
  child: Deno.ChildProcess,
  onText: () => void,
): { text: () => string; done: Promise<unknown> } {
  let text = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      text += decoder.decode(chunk, { stream: true });
      onText();
    }
  };
  return { text: () => text, done: Promise.all([collect(child.stdout), collect(child.stderr)]) };
}

/** What Deno itself needs from the environment to find its cache, and nothing else. */
export function inheritedEnv(): Record<string, string> {
  const keep = ["HOME", "PATH", "DENO_DIR", "XDG_CACHE_HOME"];
  return Object.fromEntries(keep.flatMap((name) => {
    const value = Deno.env.get(name);
    return value === undefined ? [] : [[name, value]];
  }));
}

// A clean environment (so the developer's SENTRY_DSN never leaks into a test) plus what Deno
// itself needs to find its cache.
function baseEnv(): Record<string, string> {
  return {
    ...inheritedEnv(),
    ...startTaskEnv(),
    PORT: "0",
    HOST: "127.0.0.1",
    NO_COLOR: "1",
  };
}
