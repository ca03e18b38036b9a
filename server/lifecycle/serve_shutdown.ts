/**
 * `deno serve` stops each worker's server on SIGTERM/SIGINT with a listener of its own that
 * calls `server.shutdown()` at once (Deno 2.9, ext/http/00_serve.ts `registerDeclarativeServer`),
 * and that cuts request bodies still arriving. A listener of ours cannot delay it: every
 * listener runs. Deno registers it through the global `Deno.addSignalListener` after the
 * module has loaded, so serve.ts holds that registration here and runs Deno's listener itself
 * once its own requests are done, as main.ts does before `server.shutdown()`.
 */
import { STOP_SIGNALS } from "./shutdown.ts";

const SIGNALS: ReadonlySet<Deno.Signal> = new Set(STOP_SIGNALS);

/** Deno's own shutdown listeners, held back until {@link HeldShutdown.release}. */
export interface HeldShutdown {
  /** Run the held listeners (the server's graceful shutdown); later calls do nothing. */
  release(): void;
}

/**
 * From now on, keep the SIGINT/SIGTERM listeners registered through `Deno.addSignalListener`
 * instead of registering them; put the function back once both signals have one. Call it
 * after registering your own listeners and before the module finishes loading.
 *
 * @example
 * const denoShutdown = holdServeShutdown();
 * Deno.addSignalListener("SIGTERM", async () => { await drained(); denoShutdown.release(); });
 */
export function holdServeShutdown(): HeldShutdown {
  const original = Deno.addSignalListener;
  const held = new Set<() => void>();
  const seen = new Set<Deno.Signal>();
  let released = false;
  Deno.addSignalListener = (signal, listener) => {
    if (!SIGNALS.has(signal)) return original(signal, listener);
    held.add(listener);
    seen.add(signal);
    if (seen.size === SIGNALS.size) Deno.addSignalListener = original;
  };
  return {
    release() {
      if (released) return;
      released = true;
      Deno.addSignalListener = original;
      for (const listener of held) listener();
    },
  };
}
