/**
 * Which saved files call for a server restart in `deno task dev`: main.ts, anything under
 * server/, and the client files the server renders the pages with (client/routes.tsx,
 * client/App.tsx and what they import), read from `deno info`. Other client files only need a
 * client rebuild.
 */

// server/ is restarted on for any script, not only the ones in the graph: boot.ts loads the dev
// modules by a computed URL that `deno info` cannot follow.
const SCRIPT = /\.(ts|tsx|mts|js|jsx|mjs|json)$/;

/**
 * Whether any of `changed` (paths relative to the project) is part of the server.
 *
 * @example
 * needsRestart(["client/App.tsx"], new Set(["client/App.tsx"])); // true
 * needsRestart(["client/styles.css"], new Set(["client/App.tsx"])); // false
 */
export function needsRestart(
  changed: Iterable<string>,
  serverFiles: ReadonlySet<string>,
): boolean {
  for (const path of changed) {
    if (serverFiles.has(path) || path === "main.ts") return true;
    if (path.startsWith("server/") && SCRIPT.test(path)) return true;
  }
  return false;
}

/**
 * The modules the dev server runs: main.ts, and what it renders the pages with. The render
 * modules load by a computed URL (production reads pages the build rendered), so `deno info
 * main.ts` cannot follow them.
 */
export const SERVER_ENTRIES = ["main.ts", "server/page/render.ts", "client/routes.tsx"];

/**
 * The project files in the module graphs of `entries`, relative to `root` (a `file:///.../`
 * URL). A file that does not parse is still listed (its own imports are not); an entry that
 * fails adds nothing.
 */
export async function serverModuleFiles(
  root: string,
  entries: readonly string[] = SERVER_ENTRIES,
): Promise<Set<string>> {
  const graphs = await Promise.all(entries.map(async (entry) => {
    const { code, stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", entry],
      stdout: "piped",
      stderr: "null",
    }).output();
    return code === 0 ? projectFiles(new TextDecoder().decode(stdout), root) : new Set<string>();
  }));
  return new Set(graphs.flatMap((files) => [...files]));
}

/** The project's own files in `deno info --json` output (not node_modules, not npm:). */
export function projectFiles(infoJson: string, root: string): Set<string> {
  let modules: unknown;
  try {
    modules = JSON.parse(infoJson)?.modules;
  } catch {
    return new Set();
  }
  if (!Array.isArray(modules)) return new Set();
  const files = new Set<string>();
  for (const module of modules) {
    const specifier = module?.specifier;
    if (typeof specifier !== "string" || !specifier.startsWith(root)) continue;
    const path = decodeURIComponent(specifier.slice(root.length));
    if (!path.startsWith("node_modules/")) files.add(path);
  }
  return files;
}
