/**
 * React's component stack as the last `cause` of the error, an Error whose `stack` it is: Sentry's
 * linkedErrors sends it as an exception whose frames source maps turn back into component names
 * (a plain string in `contexts.react` is never symbolicated).
 */

/** The linked error that carries a component stack; its name marks it in Sentry's UI. */
export class ComponentStackError extends Error {
  constructor(message: string, componentStack: string) {
    super(message);
    this.name = "React component stack";
    // React's text is already a V8-style list of "    at Name (url:line:col)" frames.
    this.stack = componentStack;
  }
}

// The linkedErrors integration follows five causes; walking further would be wasted work,
// and it bounds the walk on a (hostile or buggy) cyclic or very long chain.
const MAX_CHAIN = 5;

/** Append the component stack to the end of `error`'s cause chain; false if it cannot. */
export function linkComponentStack(error: unknown, componentStack: string): boolean {
  if (!(error instanceof Error) || componentStack.trim() === "") return false;
  let last: Error = error;
  for (let depth = 0; depth < MAX_CHAIN; depth++) {
    if (last instanceof ComponentStackError) return false;
    const cause: unknown = last.cause;
    if (cause === undefined) {
      try {
        last.cause = new ComponentStackError(error.message, componentStack);
        return true;
      } catch {
        // A frozen or non-extensible error: it is still reported, without the component stack.
        return false;
      }
    }
    // A cause the app set to something else is kept rather than replaced.
    if (!(cause instanceof Error)) return false;
    last = cause;
  }
  return false;
}
