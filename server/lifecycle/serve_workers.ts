/**
 * The workers of one `deno serve --parallel` process, known to each other over a
 * BroadcastChannel, so that the process ends once every worker has finished its shutdown.
 * `Deno.exit` in the first worker done would end the others mid-drain, and a worker with
 * pending I/O left (the stdin lifeline, the Sentry SDK's timers) never ends by itself.
 */

type Message = { readonly kind: "hello" | "here" | "done"; readonly id: string };

/** This worker's place among its siblings. */
export interface Workers {
  /** Workers heard of so far, this one included. */
  readonly known: number;
  /** Say this worker is done; resolves once every known worker is. */
  finished(): Promise<void>;
  /** Leave the channel (tests; a worker keeps it until the process exits). */
  close(): void;
}

/**
 * Join the workers that share `channelName`. Each says hello when it joins and answers the
 * hellos of later ones, so every worker learns of all the others long before a signal comes.
 *
 * @example
 * const workers = joinWorkers();
 * // on SIGTERM, after draining and flushing:
 * await workers.finished();
 * Deno.exit(0);
 */
export function joinWorkers(channelName = "serve-workers"): Workers {
  const id: string = crypto.randomUUID();
  const known = new Set([id]);
  const done = new Set<string>();
  const channel = new BroadcastChannel(channelName);
  let allDone: (() => void) | undefined;
  const check = () => {
    if (allDone && [...known].every((worker) => done.has(worker))) allDone();
  };
  channel.onmessage = (event: MessageEvent<Message>) => {
    const { kind, id: from } = event.data;
    known.add(from);
    if (kind === "hello") channel.postMessage({ kind: "here", id } satisfies Message);
    if (kind === "done") done.add(from);
    check();
  };
  channel.postMessage({ kind: "hello", id } satisfies Message);
  return {
    get known() {
      return known.size;
    },
    finished() {
      const finished = new Promise<void>((resolve) => allDone = resolve);
      done.add(id);
      channel.postMessage({ kind: "done", id } satisfies Message);
      check();
      return finished;
    },
    close: () => channel.close(),
  };
}
