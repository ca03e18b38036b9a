/** How a process is asked to stop, and how a server drains and waits for its sibling workers. */
import { DRAIN_TIMEOUT_MS, FLUSH_TIMEOUT_MS, STDIN_LIFELINE_FLAG } from "../constants.ts";
import { flushLogs } from "../http/request_log.ts";
import { defaultFailureLog } from "../http/failure_log.ts";
import type { InFlight } from "../deno_workarounds.ts";

/** The signals that mean "stop": Ctrl-C, and what hosts, `kill` and `docker stop` send. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** Call `stop` once: on the first stop signal, or when stdin ends if this process was started with
 * {@link STDIN_LIFELINE_FLAG}. The launcher holds the other end of that pipe and never writes; the
 * kernel closes it however the launcher ends, even by SIGKILL. Returns a function that asks for the
 * same stop (once, like the signals), for other reasons to stop. */
export function onStopRequest(stop: () => void | Promise<void>): () => void {
  let stopping: Promise<void> | undefined;
  const once = () => stopping ??= Promise.try(stop);
  for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, once);
  if (Deno.args.includes(STDIN_LIFELINE_FLAG)) {
    Deno.stdin.readable.pipeTo(new WritableStream()).catch(() => {}).finally(once);
  }
  return once;
}

/** Wait (at most {@link DRAIN_TIMEOUT_MS}) for the requests being handled, saying so in the log,
 * while `monitoring` sends from now on; then `close`, flush the logs and wait for monitoring. */
export async function drain(
  inFlight: InFlight,
  monitoring: (requests: Promise<unknown>) => Promise<unknown>,
  close: () => unknown,
): Promise<void> {
  console.log(`server: stopping (${inFlight.count} requests in flight)`);
  const requests = inFlight.idle(DRAIN_TIMEOUT_MS).then((idle) => {
    if (!idle) console.error(`server: ${inFlight.count} requests still running at shutdown`);
  });
  const delivered = monitoring(requests);
  await requests;
  await close();
  defaultFailureLog().flush();
  await Promise.all([delivered, flushLogs(FLUSH_TIMEOUT_MS)]);
}

/** Join the workers of one `deno serve --parallel` process, so it exits only once all have drained
 * (`Deno.exit` in the first one done would cut the others). Each says hello to every newcomer. */
export function joinWorkers(channelName = "serve-workers") {
  const id: string = crypto.randomUUID();
  const known = new Set([id]);
  const done = new Set<string>();
  const allDone = Promise.withResolvers<void>();
  const channel = new BroadcastChannel(channelName);
  const check = () => known.isSubsetOf(done) && allDone.resolve();
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
    /** Workers heard of so far, this one included. */
    get known(): number {
      return known.size;
    },
    /** Say this worker is done; resolves once every known worker is. */
    finished(): Promise<void> {
      done.add(id);
      channel.postMessage({ kind: "done", id });
      check();
      return allDone.promise;
    },
    /** Leave the channel (tests; a worker keeps it until the process exits). */
    close: () => channel.close(),
  };
}
