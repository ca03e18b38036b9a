/**
 * The team's pages (server/pages.ts) as the server loads them: through the bundle the build
 * writes, which drops the pages' CSS imports (Deno cannot load CSS). Tests of the shell take the
 * pages from here, never by importing server/pages.ts or client/pages/.
 */
import { importServerBundle, type ServerBundle } from "../../server/page/render.ts";
import { assertBuildCurrent } from "./server.ts";

/** The app's pages, shell component and page modules, from the current build (throws if stale). */
export async function appPages(): Promise<Required<ServerBundle>> {
  await assertBuildCurrent();
  return await importServerBundle() as Required<ServerBundle>;
}
