/**
 * The workers of one `deno serve --parallel` process, known to each other over a
 * BroadcastChannel, so that the process ends once every worker has finished its shutdown:
 * `Deno.exit` in the first worker done would end the others mid-drain, and a worker with
 * pending I/O left (the stdin lifeline, the Sentry SDK's timers) never ends by itself.
 */

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
 * Join the workers that share `channelName`. Each says hello when it joins, and says it again
 * to each worker it hears of for the first time, so every worker learns of all the others long
 * before a signal comes.
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
  const allDone = Promise.withResolvers<void>();
  const channel = new BroadcastChannel(channelName);
  const check = () => {
    if ([...known].every((worker) => done.has(worker))) allDone.resolve();
  };
  channel.onmessage = ({ data }: MessageEvent<{ kind: "hello" | "done"; id: string }>) => {
    if (!known.has(data.id)) {
      known.add(data.id);
      channel.postMessage({ kind: "hello", id });
    }
    if (data.kind === "done") done.add(data.id);
    check();
  };
  channel.postMessage({ kind: "hello", id });
  return {
    get known() {
      return known.size;
    },
    finished() {
      done.add(id);
      channel.postMessage({ kind: "done", id });
      check();
      return allDone.promise;
    },
    close: () => channel.close(),
  };
}
