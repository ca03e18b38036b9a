/**
 * React's component stack as a linked error, the shape Sentry symbolicates: an Error whose
 * `stack` is the component stack, set as the `cause` at the end of the original error's chain.
 * Sentry's linkedErrors integration (on by default, key `cause`) then sends it as a second
 * exception whose frames point into the bundle, so source maps turn the minified component
 * names back into real ones. A plain string in `contexts.react` is never symbolicated.
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

/**
 * Append the component stack to the end of `error`'s cause chain. Returns false, changing
 * nothing, when `error` is not an Error, the chain already holds one, the chain ends in a
 * value that is not an Error, or it is too long or frozen.
 */
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
