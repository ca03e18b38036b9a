/**
 * The team's pages (client/routes.tsx) as the server loads them: through the bundle the build
 * writes, which drops the pages' CSS imports (Deno cannot load CSS). Tests of the shell take the
 * pages from here, never by importing client/routes.tsx or client/pages/.
 */
import type { App } from "../../client/App.tsx";
import type { Routes } from "../../client/page_table.ts";
import { SERVER_BUNDLE } from "../../server/constants.ts";
import { assertBuildCurrent } from "./server.ts";

/** The app's routes and shell component, from the current build (throws if it is stale). */
export async function appPages(): Promise<{ routes: Routes; App: typeof App }> {
  await assertBuildCurrent();
  return await import(new URL(`../../${SERVER_BUNDLE}`, import.meta.url).href);
}
