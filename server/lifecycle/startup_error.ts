/**
 * Start-up failures an operator can fix, and the one-line exit for them. Kept apart from
 * boot.ts so the launcher (start.ts) can use it without loading React and the app.
 */
import { ConfigError } from "./config.ts";

/** A start-up failure the operator can fix; the message is one line. */
export class StartupError extends Error {
  override name = "StartupError";
}

/** Stop start-up with one line and exit code 1 for an operator error; rethrow anything else. */
export function exitOnStartupError(error: unknown): never {
  if (error instanceof ConfigError || error instanceof StartupError) {
    console.error(`error: ${error.message}`);
    Deno.exit(1);
  }
  throw error;
}
