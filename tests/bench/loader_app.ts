/**
 * For the loader cases: a copy of the project whose `/` has a loader that makes one `fetch` to a
 * backend, the backend granted in the copy's deno.json (`permissions.app.net`), built as a team
 * builds it. The app is then started in the copy as the other cases start theirs.
 */
import { copyProject, type ProjectCopy } from "../support/dev.ts";

/** The copy, in `under` (the benchmark may write only there); remove it when done. */
export async function loaderProject(backendUrl: string, under: string): Promise<ProjectCopy> {
  const project = await copyProject([], under);
  try {
    // The shell's `/` declaration, given a loader.
    const pages = await project.read("server/pages.ts");
    const loader = `loader: async () => ({ backend: await (await fetch(${
      JSON.stringify(backendUrl)
    })).text() }),`;
    const withLoader = pages.replace(/(\n\s*)Page: HomePage/, `$1${loader}$1Page: HomePage`);
    if (withLoader === pages) throw new Error("server/pages.ts declares no `Page: HomePage`");
    await project.write("server/pages.ts", withLoader);
    const denoJson = JSON.parse(await project.read("deno.json"));
    denoJson.permissions.app.net = [new URL(backendUrl).host];
    await project.write("deno.json", JSON.stringify(denoJson, null, 2));
    await project.build();
    return project;
  } catch (error) {
    await project[Symbol.asyncDispose]();
    throw error;
  }
}
