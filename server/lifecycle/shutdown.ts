/**
 * How every process of the app is asked to stop, and the drain step both server entries share.
 * The signals are the ones hosts and `docker stop` send; the stdin lifeline is the launcher's
 * (parent_gone.ts).
 */
import { DRAIN_TIMEOUT_MS, STDIN_LIFELINE_FLAG } from "../constants.ts";
import type { InFlight } from "../deno_workarounds.ts";
import { onStdinClosed } from "./parent_gone.ts";

/** The signals that mean "stop": Ctrl-C, and what hosts, `kill` and `docker stop` send. */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * Call `stop` once, on the first stop signal, or when the launcher's stdin lifeline closes if
 * this process was started with it.
 *
 * @example
 * onStopRequest(async () => { await server.shutdown(); Deno.exit(0); });
 */
export function onStopRequest(stop: () => void | Promise<void>): void {
  let stopping = false;
  const once = () => {
    if (stopping) return;
    stopping = true;
    return stop();
  };
  for (const signal of STOP_SIGNALS) Deno.addSignalListener(signal, once);
  if (Deno.args.includes(STDIN_LIFELINE_FLAG)) onStdinClosed(once);
}

/**
 * Wait until the requests already being handled are done (an upload still arriving is read to
 * the end), for at most {@link DRAIN_TIMEOUT_MS}, saying so in the log.
 */
export async function drain(inFlight: InFlight): Promise<void> {
  console.log(`server: stopping (${inFlight.count} requests in flight)`);
  if (!await inFlight.idle(DRAIN_TIMEOUT_MS)) {
    console.error(`server: ${inFlight.count} requests still running at shutdown; closing them`);
  }
}
