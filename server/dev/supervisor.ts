/**
 * Keeps `deno task dev` answering on one port: the dev server while it runs, and the error page
 * (server/dev/fallback_page.ts) from the moment it fails to start or exits on its own until the next
 * restart brings it back. Restarts run one at a time, in order.
 */
import { listeningUrl } from "../lifecycle/listen_address.ts";
import { createFallbackApp, formatLocation } from "./fallback_page.ts";
import type { BuildError } from "./reload.ts";
import { type ServerProcess, spawnServer } from "./server_process.ts";

/** Where to listen and what the server is started with. */
export interface SupervisorOptions {
  readonly hostname: string;
  /** 0 lets the first server (or error page) pick one; later ones reuse it. */
  readonly port: number;
  /** The project's `file:///.../` URL. */
  readonly root: string;
  readonly env?: Readonly<Record<string, string>>;
  /** Where the runner's own lines go. */
  readonly log?: (line: string) => void;
}

type Current =
  | { readonly process: ServerProcess }
  | { readonly fallback: Deno.HttpServer; close(): void };

/** The dev server process and, when it cannot run, the error page in its place. */
export class DevSupervisor {
  readonly #options: SupervisorOptions;
  readonly #log: (line: string) => void;
  #port: number;
  #current: Current | undefined;
  #queue: Promise<void> = Promise.resolve();

  constructor(options: SupervisorOptions) {
    this.#options = options;
    this.#port = options.port;
    this.#log = options.log ?? ((line) => console.error(line));
  }

  /** Whether the server or its error page answers (not before the first start, nor after stop). */
  get started(): boolean {
    return this.#current !== undefined;
  }

  /** Stop what runs and start the server again; resolves once it listens or has failed. */
  restart(): Promise<void> {
    return this.#serially(() => this.#restart());
  }

  /** Stop the server or the error page. */
  stop(): Promise<void> {
    return this.#serially(() => this.#stopCurrent());
  }

  async #restart(): Promise<void> {
    await this.#stopCurrent();
    const process = spawnServer({
      port: this.#port,
      root: this.#options.root,
      env: this.#options.env,
    });
    this.#current = { process };
    const outcome = await process.started;
    if ("failure" in outcome) return await this.#serveFailure(outcome.failure, "failed to start");
    this.#port = outcome.listening;
    process.crashed.then((failure) =>
      this.#serially(async () => {
        const current = this.#current;
        if (current === undefined || !("process" in current) || current.process !== process) {
          return; // restarted or stopped since
        }
        await this.#serveFailure(failure, "stopped");
      })
    );
  }

  async #serveFailure(failure: BuildError, what: string): Promise<void> {
    await this.#stopCurrent();
    const app = createFallbackApp(failure);
    const where = formatLocation(failure);
    try {
      const server = Deno.serve({
        hostname: this.#options.hostname,
        port: this.#port,
        onListen: ({ port }) => {
          this.#port = port;
          this.#log(
            `dev: the server ${what}${where && ` (${where})`}; the page at ` +
              `${listeningUrl({ hostname: this.#options.hostname, port })} shows why until the ` +
              `next save`,
          );
        },
      }, app.handler);
      this.#current = { fallback: server, close: app.close };
    } catch (error) {
      app.close();
      this.#log(`dev: the server ${what}, and the error page could not listen either: ${error}`);
    }
  }

  async #stopCurrent(): Promise<void> {
    const current = this.#current;
    this.#current = undefined;
    if (current === undefined) return;
    if ("process" in current) return await current.process.stop();
    // Open event streams would hold shutdown() forever; pages reconnect to the next server.
    current.close();
    await current.fallback.shutdown();
  }

  #serially(step: () => Promise<void>): Promise<void> {
    const run = this.#queue.then(step);
    this.#queue = run.catch((error) => this.#log(`dev: ${error}`));
    return run;
  }
}
