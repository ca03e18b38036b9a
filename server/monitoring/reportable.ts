/**
 * What the Sentry SDK is given in place of a thrown value it could choke on. The app may throw
 * anything, and `@sentry/core` (10.x) reads what it is given while it builds the event:
 *
 * - a Symbol, or an error whose `name`, `message` or `stack` getter throws, makes it throw midway,
 *   after it counted the event as in progress: every later flush then waits out its timeout;
 * - its linked-errors code walks every entry of an `errors` array (AggregateError, what
 *   `Promise.any` rejects with) and copies the list for each one: 20,000 entries kept the server
 *   busy for 6 s and made a 22 MB event;
 * - a thrown plain object is serialized whole, strings of any length included;
 * - a stack whose message holds lines of its own gets them read as frames.
 *
 * So the value is checked here first, reading each property once inside a `try`. An ordinary
 * error comes back as it is; anything else comes back as a bounded copy that keeps what can be
 * read (type, message, stack, `cause` and the first `errors`, five levels deep), or as an Error
 * saying the value could not be read.
 */

import { framesStart } from "../error_throttle.ts";

/** Linked errors followed, as deep as the SDK's own limit, and entries of `errors` kept. */
export const MAX_LINKED = 5;
/** Longest string kept of a thrown plain object's values. */
export const MAX_STRING = 1024;
/** Properties kept of a thrown plain object. */
export const MAX_KEYS = 50;
/** Longest error name kept: the SDK cuts the message (maxValueLength), not the type. */
export const MAX_NAME = 200;

/**
 * `thrown` or a bounded, readable stand-in for it.
 *
 * @example
 * captureException(reportable(error));
 */
export function reportable(thrown: unknown): unknown {
  try {
    return checked(thrown, 0);
  } catch {
    return standIn("a thrown value that could not be read");
  }
}

function checked(value: unknown, depth: number): unknown {
  if (typeof value === "symbol") return String(value);
  // The SDK reads a function as an object (its keys, its string form), which may throw.
  if (typeof value === "function") return standIn("a thrown function");
  if (typeof value !== "object" || value === null) return value;
  // Throws for a revoked Proxy: the caller's catch stands in for it.
  if (!(value instanceof Error)) return plainCopy(value);
  const name = value.name;
  const message = value.message;
  const stack = value.stack;
  if (typeof name !== "string" || typeof message !== "string") {
    return standIn("a thrown error whose name or message is not text");
  }
  const cause = "cause" in value ? value.cause : undefined;
  const errors = (value as { errors?: unknown }).errors;
  const deeper = depth + 1 < MAX_LINKED;
  const keptCause = deeper ? checked(cause, depth + 1) : undefined;
  const listed = Array.isArray(errors);
  const keptErrors = listed && deeper
    ? errors.slice(0, MAX_LINKED).map((entry) => checked(entry, depth + 1))
    : [];
  // The SDK splits a stack that is there: anything but a string is dropped.
  const keptStack = typeof stack === "string" ? withoutMessageLines(stack, message) : undefined;
  const keptName = name.slice(0, MAX_NAME);
  const unchanged = keptCause === cause && keptStack === stack && keptName === name &&
    (!listed ||
      (errors.length === keptErrors.length && keptErrors.every((e, i) => e === errors[i])));
  if (unchanged) return value;
  const copy = new Error(message);
  Object.defineProperty(copy, "name", { value: keptName, configurable: true, writable: true });
  // Never the copy's own stack: its frames would be this module's.
  copy.stack = keptStack;
  if (keptCause !== undefined) copy.cause = keptCause;
  if (listed) Object.assign(copy, { errors: keptErrors });
  return copy;
}

// An error that says what was thrown, with no frames: made here, it would carry this module's.
function standIn(message: string): Error {
  const error = new Error(message);
  error.stack = `Error: ${message}`;
  return error;
}

// A plain object as the SDK would serialize it, bounded: its first keys, strings cut, nested
// objects named only.
function plainCopy(value: object): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  let count = 0;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (count++ >= MAX_KEYS) break;
    const entry = (value as Record<string, unknown>)[key];
    const kept = typeof entry === "string"
      ? entry.slice(0, MAX_STRING)
      : typeof entry === "object" && entry !== null
      ? "[object]"
      : typeof entry === "symbol" || typeof entry === "function"
      ? String(entry)
      : entry;
    // Defined, not assigned: a key named `__proto__` is data here.
    Object.defineProperty(copy, key.slice(0, MAX_STRING), {
      value: kept,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return copy;
}

/**
 * The stack with the message's line breaks made spaces in its first line. The SDK reads every
 * line of `stack` that looks like a frame as one, message lines included, and a message can
 * quote a client's input (V8's JSON.parse error does): the event would carry frames the client
 * wrote, and Sentry would group by them. The message itself is sent unchanged.
 */
function withoutMessageLines(stack: string, message: string): string {
  const start = framesStart(stack, message);
  const head = stack.slice(0, start);
  if (!head.includes("\n")) return stack;
  return head.replaceAll(/\r?\n/g, " ") + stack.slice(start);
}
