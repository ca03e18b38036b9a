/** Values shared by several modules; one place to change them. */

/** The folder served at `/`; the build writes its output under it. */
export const STATIC_DIR = "static";

/** The client build's output: content-hashed files, served `immutable`. */
export const BUILD_DIR = `${STATIC_DIR}/build`;

/** What the build produced, for the server (dot files, so they are never served). */
export const MANIFEST_FILE = `${BUILD_DIR}/.manifest.json`;
export const PAGES_FILE = `${BUILD_DIR}/.pages.json`;
/** esbuild's metafile of the client build: every output and what it imports. */
export const METAFILE_FILE = `${BUILD_DIR}/.metafile.json`;
/** The app's pages and shell bundled for the server (CSS left to the browser's bundle). */
export const SERVER_BUNDLE = `${BUILD_DIR}/.server.js`;

/** Shutdown: requests in flight get up to 10 s (as Sentry Relay), then logs and the SDK 2 s. The
 * delivery queue sends from the signal on, alongside, and stops 4.5 s after it: Deno Deploy sends
 * SIGINT, then SIGKILL 5 s later, which leaves 0.5 s to log what was not sent and exit. */
export const DRAIN_TIMEOUT_MS = 10_000, FLUSH_TIMEOUT_MS = 2_000, QUEUE_DRAIN_MS = 4_500;

/** Dev-only routes (never in production): live reload's events and script, the inbox page. */
export const DEV_PATHS = {
  reload: "/_dev/reload",
  client: "/_dev/client.js",
  inbox: "/_dev/inbox",
} as const;

/** The dev inbox's DSN: `.invalid` never resolves, so nothing leaves the machine. */
export const DEV_INBOX_DSN = "http://dev@inbox.invalid/0";

/** Tells the server its stdin is a pipe from the launcher, whose end means "stop". */
export const STDIN_LIFELINE_FLAG = "--until-stdin-closes";
