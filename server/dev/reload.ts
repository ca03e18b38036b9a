/**
 * Live reload, the server's half (development only). The dev runner (`server/tasks/dev.ts`) writes
 * {@link DEV_STATUS_FILE} after every client build; the server watches it and tells open pages
 * over Server-Sent Events at `/_dev/reload`:
 *
 * - `hello` on connect, with this server's session id and build id: a page that reconnects to a
 *   restarted server (or a newer build) reloads itself;
 * - `reload` after a good build, once the server serves the new files;
 * - `build-error` after a broken one, with each error's file, line and column, for the overlay
 *   that `client/dev_client.js` draws;
 * - `server-error` on connect, from the page the runner serves while the server cannot start
 *   (server/dev/fallback_page.ts), with the error that stopped it.
 */
import type { Message } from "esbuild";
import { DEV_STATUS_FILE } from "../constants.ts";

/** One esbuild error, as the overlay shows it. */
export interface BuildError {
  readonly text: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  /** The source line the error points into (a code frame for a server error). */
  readonly lineText?: string;
  /** Where it was thrown from, one frame a line (server errors). */
  readonly stack?: string;
}

/** Turn an esbuild message into what the status file and the overlay carry. */
export function toBuildError(message: Message): BuildError {
  const location = message.location;
  return location === null ? { text: message.text } : {
    text: message.text,
    file: location.file,
    line: location.line,
    column: location.column + 1, // esbuild counts columns from 0, editors from 1
    lineText: location.lineText,
  };
}

/** The outcome of the latest client build; `seq` grows with every build. */
export type BuildStatus =
  | { readonly seq: number; readonly ok: true; readonly buildId: string }
  | { readonly seq: number; readonly ok: false; readonly errors: readonly BuildError[] };

// Proxies and browsers drop an idle connection after a minute or so; a comment line keeps it.
const KEEP_ALIVE_MS = 15_000;
const RECONNECT_MS = 300;

/** Read the status file; null when it is missing or unreadable (no dev build yet). */
export async function readBuildStatus(path = DEV_STATUS_FILE): Promise<BuildStatus | null> {
  try {
    const value = JSON.parse(await Deno.readTextFile(path));
    const valid = typeof value?.seq === "number" &&
      (value.ok === true ? typeof value.buildId === "string" : Array.isArray(value.errors));
    return valid ? value : null;
  } catch {
    return null;
  }
}

/** Write the status file atomically (a reader never sees half of it). */
export async function writeBuildStatus(status: BuildStatus, path = DEV_STATUS_FILE) {
  const temporary = `${path}.tmp`;
  await Deno.writeTextFile(temporary, JSON.stringify(status) + "\n");
  await Deno.rename(temporary, path);
}

/**
 * Call `onChange` with each new status the runner writes (seq greater than the last one seen).
 * Returns a function that stops watching.
 */
export function watchBuildStatus(
  onChange: (status: BuildStatus) => void | Promise<void>,
  options: { path?: string; lastSeq?: number } = {},
): () => void {
  const path = options.path ?? DEV_STATUS_FILE;
  const dir = path.slice(0, path.lastIndexOf("/")) || ".";
  const name = path.slice(path.lastIndexOf("/") + 1);
  const watcher = Deno.watchFs(dir, { recursive: false });
  let lastSeq = options.lastSeq ?? -1;
  let checking = Promise.resolve();
  const check = async () => {
    const status = await readBuildStatus(path);
    if (status === null || status.seq <= lastSeq) return;
    lastSeq = status.seq;
    await onChange(status);
  };
  (async () => {
    for await (const event of watcher) {
      if (!event.paths.some((p) => p.endsWith(`/${name}`))) continue;
      // One check at a time, in order: a build's status is applied before the next one's.
      checking = checking.then(check).catch((error) => console.error("dev reload:", error));
    }
  })();
  return () => watcher.close();
}

/** The `/_dev/reload` event stream and the pages connected to it. */
export class ReloadChannel {
  readonly #clients = new Set<ReadableStreamDefaultController<Uint8Array>>();
  readonly #session = crypto.randomUUID();
  readonly #encoder = new TextEncoder();
  #status: BuildStatus | null;
  #buildId: string;
  #keepAlive: ReturnType<typeof setInterval> | undefined;

  readonly #serverError: BuildError | undefined;

  constructor(initial: { status: BuildStatus | null; buildId: string; serverError?: BuildError }) {
    this.#status = initial.status;
    this.#buildId = initial.buildId;
    this.#serverError = initial.serverError;
  }

  /** `GET /_dev/reload`: a Server-Sent Events stream that stays open. */
  readonly handler = (): Response => {
    let client: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        client = controller;
        this.#clients.add(controller);
        this.#keepAlive ??= setInterval(() => this.#send(": keep-alive\n\n"), KEEP_ALIVE_MS);
        // `retry`: reconnect quickly when the server restarts, then `hello` tells what changed.
        controller.enqueue(this.#encoder.encode(`retry: ${RECONNECT_MS}\n\n`));
        controller.enqueue(
          this.#event("hello", { session: this.#session, buildId: this.#buildId }),
        );
        if (this.#status?.ok === false) {
          controller.enqueue(this.#event("build-error", { errors: this.#status.errors }));
        }
        if (this.#serverError !== undefined) {
          controller.enqueue(this.#event("server-error", { errors: [this.#serverError] }));
        }
      },
      cancel: () => this.#remove(client),
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-store" },
    });
  };

  /** Tell every page about a finished build (call after the server serves a good one). */
  publish(status: BuildStatus): void {
    this.#status = status;
    if (status.ok) {
      this.#buildId = status.buildId;
      this.#send(this.#event("reload", { buildId: status.buildId }));
    } else {
      this.#send(this.#event("build-error", { errors: status.errors }));
    }
  }

  /** End every stream, so a graceful shutdown does not wait for pages that never leave. */
  close(): void {
    for (const client of [...this.#clients]) {
      this.#remove(client);
      try {
        client.close();
      } catch { /* already closed */ }
    }
  }

  #event(name: string, data: unknown): Uint8Array {
    return this.#encoder.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  #send(chunk: string | Uint8Array): void {
    const bytes = typeof chunk === "string" ? this.#encoder.encode(chunk) : chunk;
    for (const client of [...this.#clients]) {
      try {
        client.enqueue(bytes);
      } catch {
        this.#remove(client);
      }
    }
  }

  #remove(client: ReadableStreamDefaultController<Uint8Array>): void {
    this.#clients.delete(client);
    if (this.#clients.size === 0 && this.#keepAlive !== undefined) {
      clearInterval(this.#keepAlive);
      this.#keepAlive = undefined;
    }
  }
}
