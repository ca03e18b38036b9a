/**
 * Stack frames relative to the app's root: `/srv/app/server/app.ts` becomes
 * `app:///server/app.ts`, so the same error groups as one issue on every host and checkout.
 */
import type { Event, Integration, StackFrame } from "@sentry/core";

/** The prefix frames inside the app's root get instead of the root's absolute path. */
export const APP_PREFIX = "app:///";

/**
 * A frame's path relative to the root (`root` ends with `/`), or the path unchanged when it
 * lies outside. Accepts plain paths and `file://` URLs.
 *
 * @example
 * relativeToRoot("file:///srv/app/server/app.ts", "/srv/app/"); // "app:///server/app.ts"
 */
export function relativeToRoot(path: string, root: string): string {
  const plain = path.startsWith("file://") ? path.slice(7) : path;
  return plain.startsWith(root) ? APP_PREFIX + plain.slice(root.length) : path;
}

/** Rewrite every frame of an event's exceptions and threads in place; returns the event. */
export function rewriteFrames(event: Event, root: string): Event {
  for (const value of event.exception?.values ?? []) rewriteAll(value.stacktrace?.frames, root);
  for (const thread of event.threads?.values ?? []) rewriteAll(thread.stacktrace?.frames, root);
  return event;
}

function rewriteAll(frames: StackFrame[] | undefined, root: string): void {
  for (const frame of frames ?? []) {
    if (frame.filename !== undefined) frame.filename = relativeToRoot(frame.filename, root);
    if (frame.abs_path !== undefined) frame.abs_path = relativeToRoot(frame.abs_path, root);
  }
}

/**
 * An SDK integration that rewrites frames on every error event; `root` is the app's folder
 * as a `file:` URL or a path ending in `/`.
 */
export function appFramesIntegration(root: string): Integration {
  const path = root.startsWith("file://") ? decodeURIComponent(root.slice(7)) : root;
  return {
    name: "AppFrames",
    processEvent: (event) => rewriteFrames(event, path),
  };
}
