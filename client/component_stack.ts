/** React's component stack as the error's last `cause`: Sentry's linkedErrors sends it as frames
 * that source maps turn into component names (a string in `contexts.react` is not symbolicated). */

/** The linked error that carries a component stack; its name marks it in Sentry's UI. */
export class ComponentStackError extends Error {
  constructor(message: string, componentStack: string) {
    super(message);
    this.name = "React component stack";
    // React's text is already a V8-style list of "    at Name (url:line:col)" frames.
    this.stack = componentStack;
  }
}

// linkedErrors follows five causes; the cap also bounds a (hostile) cyclic or very long chain.
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
    if (!(cause instanceof Error)) return false;
    last = cause;
  }
  return false;
}
