/** A thrown value the SDK can take: `@sentry/core` 10.x throws midway on a Symbol, revoked Proxy,
 * throwing getter or non-text stack (later flushes time out), walks large values whole and reads a
 * message's lines as frames; an ordinary error passes, else a bounded copy or a stand-in Error. */
import { framesStart } from "../http/failure_log.ts";

/** Linked errors followed, as deep as the SDK's own limit, and entries of `errors` kept. */
export const MAX_LINKED = 5;
/** Longest string kept of a thrown plain object's values. */
export const MAX_STRING = 1024;
/** Properties kept of a thrown plain object. */
export const MAX_KEYS = 50;
/** Longest error name kept. */
export const MAX_NAME = 200;

/** `thrown` or a bounded, readable stand-in for it. */
export function reportable(thrown: unknown): unknown {
  try {
    return checked(thrown, 0);
  } catch {
    return standIn("a thrown value that could not be read");
  }
}

// Each property is read once; a throw (a getter, a revoked Proxy) ends in reportable's catch.
function checked(value: unknown, depth: number): unknown {
  if (typeof value === "symbol") return String(value);
  if (typeof value === "function") return standIn("a thrown function");
  if (typeof value !== "object" || value === null) return value;
  if (!(value instanceof Error)) return plainCopy(value);
  const { name, message, stack } = value;
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

// An error without frames: made here, it would carry this module's.
function standIn(message: string): Error {
  return Object.assign(new Error(message), { stack: `Error: ${message}` });
}

// A plain object's first keys, strings cut; Object.fromEntries makes a `__proto__` key data.
function plainCopy(value: object): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(value).slice(0, MAX_KEYS).map((key) => {
      const entry = (value as Record<string, unknown>)[key];
      const kept = typeof entry === "string"
        ? entry.slice(0, MAX_STRING)
        : typeof entry === "object" && entry !== null
        ? "[object]"
        : typeof entry === "symbol" || typeof entry === "function"
        ? String(entry)
        : entry;
      return [key.slice(0, MAX_STRING), kept];
    }),
  );
}

// The message's line breaks made spaces in the stack only: a client's lines never pass as frames.
function withoutMessageLines(stack: string, message: string): string {
  const start = framesStart(stack, message);
  const head = stack.slice(0, start);
  return head.includes("\n") ? head.replaceAll(/\r?\n/g, " ") + stack.slice(start) : stack;
}
