/**
 * What `createApp` is built from. Kept apart from app.ts so the handlers it wires up (pages,
 * monitoring) can name their dependencies without importing the app itself.
 */
import type { ApiRoutes } from "../api/router.ts";
import type { Manifest } from "../build/manifest.ts";
import type { Config } from "../lifecycle/config.ts";
import type { Monitoring } from "../monitoring/monitoring.ts";
import type { StaticIndex } from "./static_files.ts";
import type { FailureLog } from "./failure_log.ts";
import type { RenderedPages } from "../page/rendered_pages.ts";

/** What the app is built from; server/lifecycle/boot.ts gathers it once at start-up. */
export interface AppDeps {
  readonly config: Config;
  readonly manifest: Manifest;
  readonly staticIndex: StaticIndex;
  /** The pages of `client/routes.tsx`, rendered to HTML (by the build, or in dev at start). */
  readonly pages: RenderedPages;
  /** The release reported to monitoring and on /healthz. */
  readonly release: string;
  readonly monitoring: Monitoring;
  /** Upstream fetch for the tunnel: the one from before monitoring wrapped `fetch`. */
  readonly fetch?: typeof fetch;
  /** Where handlers' faults are logged, within a limit; the process's, on stderr, by default. */
  readonly failureLog?: FailureLog;
  /** Where request log lines go (one per request); stdout, batched, by default. */
  readonly logLine?: (line: string) => void;
  /** Every request arrives over TLS (see isHttps); by default, only on Deno Deploy. */
  readonly httpsListener?: boolean;
  /** The API routes; by default the app's own, from `server/api/routes.ts`. */
  readonly apiRoutes?: ApiRoutes;
}
