/** Errors raised before the Sentry chunk has loaded, kept and handed over once it is up. */

/** Extra detail sent with an error, such as React's component stack. */
export interface ErrorContext {
  readonly mechanism: string;
  readonly handled: boolean;
  readonly componentStack?: string;
}

/** Where errors go: into the buffer until a sink is attached, then straight to the sink. */
export type ErrorSink = (error: unknown, context: ErrorContext) => void;

// Enough for a burst at start-up; past it the oldest are dropped rather than growing forever.
const LIMIT = 50;

/** Collects errors until {@link ErrorBuffer.attach} gives it a sink. */
export class ErrorBuffer {
  #pending: [unknown, ErrorContext][] = [];
  #sink: ErrorSink | undefined;
  #listening = new AbortController();

  capture(error: unknown, context: ErrorContext): void {
    if (this.#sink) return this.#sink(error, context);
    this.#pending.push([error, context]);
    if (this.#pending.length > LIMIT) this.#pending.shift();
  }

  /** Catch uncaught errors and unhandled rejections until Sentry's own handlers take over. */
  listen(target: Window): void {
    const onError = (event: ErrorEvent) =>
      this.capture(event.error ?? event.message, { mechanism: "onerror", handled: false });
    const onRejection = (event: PromiseRejectionEvent) =>
      this.capture(event.reason, { mechanism: "onunhandledrejection", handled: false });
    target.addEventListener("error", onError, { signal: this.#listening.signal });
    target.addEventListener("unhandledrejection", onRejection, { signal: this.#listening.signal });
  }

  /** Hand over every buffered error to `sink`, which then receives new ones directly. */
  attach(sink: ErrorSink, options: { stopListening: boolean }): void {
    if (options.stopListening) this.#listening.abort();
    this.#sink = sink;
    for (const [error, context] of this.#pending.splice(0)) sink(error, context);
  }

  get size(): number {
    return this.#pending.length;
  }
}
