/** Session Replay, a chunk of its own: loaded only while a SENTRY_REPLAYS_* rate is above 0. */
import { replayIntegration } from "@sentry/replay";
import { addIntegration } from "../monitoring.ts";
import type { ReplayOptions } from "../sentry_options.ts";

/** Record with the app's options; `workerUrl` is the build's compression worker (no `blob:`). */
export function startReplay(options: ReplayOptions, workerUrl: string): void {
  addIntegration(replayIntegration({ ...options, workerUrl }));
}
