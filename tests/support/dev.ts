/**
 * Support for the dev-mode tests: a throwaway copy of the project to edit, `deno task dev`
 * started in it, and a reader for its Server-Sent Events.
 *
 * @example
 * await using project = await copyProject();
 * await using dev = await startDev(project.dir);
 * const events = openEvents(`${dev.url}_dev/reload`);
 */
import { collectOutput, inheritedEnv } from "./server.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
// What dev mode needs; static/build is left out so the copy starts without a build.
const COPIED = ["client", "server", "main.ts", "serve.ts", "deno.json", "deno.lock"];
const START_TIMEOUT_MS = 30_000;

/** A temporary copy of the project; removed on dispose. */
export interface ProjectCopy extends AsyncDisposable {
  readonly dir: string;
  /** Write a file (path relative to the copy). */
  write(path: string, text: string): Promise<void>;
  read(path: string): Promise<string>;
  /** Run `deno ...args` in the copy to its end: exit code, stdout then stderr. */
  run(args: string[]): Promise<{ code: number; output: string }>;
  /** Run `deno task build` in the copy; throws with its output when it fails. */
  build(): Promise<void>;
}

/**
 * Copy the project (and the folders in `extra`, such as `tests`) into a temporary folder (in
 * `under` when given, else the system's), with node_modules linked rather than copied.
 */
export async function copyProject(
  extra: readonly string[] = [],
  under?: string,
): Promise<ProjectCopy> {
  const dir = await Deno.makeTempDir({ dir: under, prefix: "dev-test-" });
  for (const name of [...COPIED, ...extra]) await copy(`${ROOT}${name}`, `${dir}/${name}`);
  await Deno.mkdir(`${dir}/static`);
  for await (const entry of Deno.readDir(`${ROOT}static`)) {
    if (entry.isFile) {
      await Deno.copyFile(`${ROOT}static/${entry.name}`, `${dir}/static/${entry.name}`);
    }
  }
  await Deno.symlink(`${ROOT}node_modules`, `${dir}/node_modules`);
  const project: ProjectCopy = {
    dir,
    write: (path, text) => Deno.writeTextFile(`${dir}/${path}`, text),
    read: (path) => Deno.readTextFile(`${dir}/${path}`),
    async run(args) {
      const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
        args,
        cwd: dir,
        env: { ...inheritedEnv(), NO_COLOR: "1" },
        clearEnv: true,
        stdin: "null",
      }).output();
      const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
      return { code, output: decode(stdout) + decode(stderr) };
    },
    async build() {
      const { code, output } = await project.run(["task", "build"]);
      if (code !== 0) throw new Error(`deno task build failed in ${dir}:\n${output}`);
    },
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
  return project;
}

async function copy(from: string, to: string): Promise<void> {
  const info = await Deno.stat(from);
  if (!info.isDirectory) return await Deno.copyFile(from, to);
  await Deno.mkdir(to);
  for await (const entry of Deno.readDir(from)) {
    await copy(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

/** A running `deno task dev`. */
export interface RunningDev extends AsyncDisposable {
  /** The server's URL, from its start-up line. */
  readonly url: string;
  readonly process: Deno.ChildProcess;
  /** Everything printed so far. */
  output(): string;
  /** Resolve once the output (from `from` on) matches `pattern`. */
  waitForOutput(pattern: RegExp, from?: number, timeoutMs?: number): Promise<RegExpExecArray>;
  /** SIGTERM, then the exit status. */
  stop(): Promise<Deno.CommandStatus>;
}

/** How to start `deno task dev`. */
export interface DevOptions {
  /** Under a `sh -c` that outlives nothing, as npx runs it; `process` is then that shell. */
  readonly underShell?: boolean;
  /** Leave NO_COLOR unset, so Deno colours what it prints, as in a developer's terminal. */
  readonly color?: boolean;
  /** More environment variables for the task. */
  readonly env?: Readonly<Record<string, string>>;
}

/** Start `deno task dev` in `dir` on 127.0.0.1, port 0, and wait until it serves. */
export async function startDev(dir: string, options: DevOptions = {}): Promise<RunningDev> {
  const task = [Deno.execPath(), "task", "dev"];
  const child = new Deno.Command(options.underShell ? "sh" : task[0], {
    // `; true` keeps sh from handing its process over to deno task.
    args: options.underShell ? ["-c", `"${task[0]}" task dev; true`] : task.slice(1),
    cwd: dir,
    env: {
      ...inheritedEnv(),
      PORT: "0",
      HOST: "127.0.0.1",
      ...(options.color ? {} : { NO_COLOR: "1" }),
      ...options.env,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const listeners = new Set<() => void>();
  const { text: output, done: collected } = collectOutput(
    child,
    () => listeners.forEach((check) => check()),
  );
  let stopped: Promise<Deno.CommandStatus> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already exited */ }
      const status = await child.status;
      await collected;
      return status;
    })();

  const waitForOutput = (pattern: RegExp, from = 0, timeoutMs = START_TIMEOUT_MS) =>
    waitUntil(
      listeners,
      () => pattern.exec(output().slice(from)) ?? undefined,
      timeoutMs,
      () => `dev: no ${pattern} in ${timeoutMs} ms; output:\n${output()}`,
    );

  let url: string;
  try {
    url = (await waitForOutput(/Listening on (http:\/\/127\.0\.0\.1:\d+\/)/))[1];
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    process: child,
    output,
    waitForOutput,
    stop,
    [Symbol.asyncDispose]: async () => void await stop(),
  };
}

/**
 * Resolve with the first value `find` returns, checked now and whenever a listener is called;
 * reject after `timeoutMs` with `message()`.
 */
function waitUntil<T>(
  listeners: Set<() => void>,
  find: () => T | undefined,
  timeoutMs: number,
  message: () => string,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const check = () => {
      const found = find();
      if (found === undefined) return;
      done();
      resolve(found);
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(message()));
    }, timeoutMs);
    const done = () => {
      clearTimeout(timer);
      listeners.delete(check);
    };
    listeners.add(check);
    check();
  });
}

/** One Server-Sent Event. */
export interface ServerEvent {
  readonly event: string;
  readonly data: string;
}

/** An open event stream; events are collected as they arrive. */
export interface EventReader extends AsyncDisposable {
  readonly events: readonly ServerEvent[];
  /** The first event named `name` at or after index `from`. */
  next(name: string, from?: number, timeoutMs?: number): Promise<ServerEvent>;
  close(): Promise<void>;
}

/** Open `url` as a Server-Sent Events stream. */
export async function openEvents(url: string): Promise<EventReader> {
  const response = await fetch(url);
  if (!response.ok || response.body === null) {
    await response.body?.cancel();
    throw new Error(`${url}: ${response.status}`);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  const events: ServerEvent[] = [];
  const listeners = new Set<() => void>();
  const reading = (async () => {
    let buffer = "";
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer += value;
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const field = (name: string) =>
            block.split("\n").find((line) => line.startsWith(`${name}: `))?.slice(name.length + 2);
          const event = field("event");
          if (event !== undefined) events.push({ event, data: field("data") ?? "" });
        }
        listeners.forEach((check) => check());
      }
    } catch {
      // cancelled by close()
    }
  })();
  const close = async () => {
    await reader.cancel().catch(() => {});
    await reading;
  };
  return {
    events,
    next(name, from = 0, timeoutMs = 20_000) {
      return waitUntil(
        listeners,
        () => events.slice(from).find((e) => e.event === name),
        timeoutMs,
        () => `no "${name}" event in ${timeoutMs} ms; got ${JSON.stringify(events)}`,
      );
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
