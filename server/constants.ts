/** Values shared by several modules; one place to change them. */

/** The folder served at `/`; the build writes its output under it. */
export const STATIC_DIR = "static";

/** The client build's output: content-hashed files, served `immutable`. */
export const BUILD_DIR = `${STATIC_DIR}/build`;

/** What the build produced, for the server (a dot file, so it is never served). */
export const MANIFEST_FILE = `${BUILD_DIR}/.manifest.json`;

/** The pages as HTML, rendered by the production build (a dot file, never served). */
export const PAGES_FILE = `${BUILD_DIR}/.pages.json`;

/** How long shutdown waits for monitoring to send what it has queued. */
export const FLUSH_TIMEOUT_MS = 2_000;

/** Where the development-only pages and endpoints live (never routed in production). */
export const DEV_PATHS = {
  /** Server-Sent Events: `hello` with the id of the process answering. */
  reload: "/_dev/reload",
  /** The script that listens to them and reloads the page when that id changes. */
  client: "/_dev/client.js",
  /** The monitoring inbox page. */
  inbox: "/_dev/inbox",
} as const;

/**
 * The DSN both SDKs use when monitoring goes to the dev inbox. `.invalid` can never resolve,
 * so nothing ever leaves the machine: the tunnel hands these envelopes to the inbox directly.
 */
export const DEV_INBOX_DSN = "http://dev@inbox.invalid/0";

/**
 * How long shutdown waits for requests already being handled (uploads still arriving, the
 * tunnel's forwarding) before closing them; Sentry Relay waits as long.
 */
export const DRAIN_TIMEOUT_MS = 10_000;

/**
 * The launcher (start.ts) passes this to main.ts: stdin is a pipe from the launcher, and its end
 * means the launcher is gone, so the server shuts down as on SIGTERM.
 */
export const STDIN_LIFELINE_FLAG = "--until-stdin-closes";
