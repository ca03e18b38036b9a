/**
 * End-to-end: the README's store (Deno KV, deno.json's `"unstable": ["kv"]`) in a copy of the
 * project served as `deno task start` serves it. With `read` and `write` of "data" granted in
 * `permissions.app`, an API route stores a note in data/kv.sqlite3 and a page's loader reads it
 * back, after a restart too; without the grant, the log line says what to add to deno.json.
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { copyProject, type ProjectCopy } from "./support/dev.ts";
import { startServer } from "./support/server.ts";

// The README's code, as a team writes it.
const STORE = `import { onDenoDeploy } from "./http/request_context.ts";

let store: Promise<Deno.Kv> | undefined;
/** The app's Deno KV: Deploy's database on Deno Deploy, data/kv.sqlite3 here; opened on first use. */
export const openStore = (): Promise<Deno.Kv> =>
  store ??= onDenoDeploy()
    ? Deno.openKv()
    : Deno.mkdir("data", { recursive: true }).then(() => Deno.openKv("data/kv.sqlite3"));
`;
const ROUTE = `  "/api/notes": {
    POST: async (_req, ctx) => {
      const { text } = await ctx.json<{ text?: unknown }>();
      // A Deno KV value holds at most 64 KiB: a note stays well under it.
      if (typeof text !== "string" || text.length === 0 || text.length > 2000) {
        throw new ApiError(400, "text: expected 1 to 2000 characters");
      }
      const kv = await openStore();
      const key = ["notes", Date.now(), crypto.randomUUID()];
      await kv.set(key, { text });
      return Response.json({ key }, { status: 201 });
    },
  },
`;
const LOADER = `    definePage({
      path: "/notes",
      title: "Notes",
      Page: NotesPage,
      loader: async () => {
        const kv = await openStore();
        const latest = kv.list<{ text: string }>({ prefix: ["notes"] }, { reverse: true, limit: 20 });
        return { notes: await Array.fromAsync(latest, (entry) => entry.value.text) };
      },
    }),
`;
const PAGE = `import type { PageProps } from "../../server/define.ts";

export function NotesPage({ data }: PageProps<{ notes: string[] }>) {
  return <ul className="notes">{data.notes.map((text, i) => <li key={i}>{text}</li>)}</ul>;
}
`;

/** Put `insert` after the first line matching `after` in the copy's file at `path`. */
async function insertAfter(project: ProjectCopy, path: string, after: RegExp, insert: string) {
  const lines = (await project.read(path)).split("\n");
  const at = lines.findIndex((line) => after.test(line));
  assert.ok(at >= 0, `${after} in ${path}`);
  lines.splice(at + 1, 0, insert.trimEnd());
  await project.write(path, lines.join("\n"));
}

/** Import `name` by `line` into the copy's file at `path`, unless the team's code already does. */
async function importOnce(project: ProjectCopy, path: string, name: string, line: string) {
  if (new RegExp(`^import [^;]*\\b${name}\\b`, "m").test(await project.read(path))) return;
  await insertAfter(project, path, /^import /, line);
}

/** The copy's `permissions.app` with "data" readable and writable, or neither (whatever the
 * team granted besides, as a list). */
async function grantData(project: ProjectCopy, granted: boolean) {
  const config = JSON.parse(await project.read("deno.json"));
  const app = config.permissions?.app ?? {};
  const others = (v: unknown) => Array.isArray(v) ? v.filter((value) => value !== "data") : [];
  const data = granted ? ["data"] : [];
  const [read, write] = [[...others(app.read), ...data], [...others(app.write), ...data]];
  config.permissions = { ...config.permissions, app: { ...app, read, write } };
  await project.write("deno.json", JSON.stringify(config, null, 2));
}

Deno.test({
  name:
    "Deno KV: an API route stores, a page's loader reads it back, with deno task start's grants",
  // Each server is stopped before the test ends; Deno's child pipes close with it.
  sanitizeResources: false,
  async fn() {
    assert.deepEqual(denoJson.unstable, ["kv"], "the shell's deno.json enables Deno KV");
    await using project = await copyProject();
    await project.write("server/store.ts", STORE);
    await project.write("client/pages/notes.tsx", PAGE);
    // Imports the team's code may already have (it followed the README) are not added twice.
    const [pages, routes] = ["server/pages.ts", "server/api/routes.ts"];
    await importOnce(project, pages, "openStore", 'import { openStore } from "./store.ts";');
    await insertAfter(
      project,
      pages,
      /^import /,
      'import { NotesPage } from "../client/pages/notes.tsx";',
    );
    await insertAfter(project, pages, /^\s*pages: \[$/, LOADER);
    await importOnce(project, routes, "ApiError", 'import { ApiError } from "./router.ts";');
    await importOnce(project, routes, "openStore", 'import { openStore } from "../store.ts";');
    await insertAfter(project, routes, /^export const apiRoutes/, ROUTE);
    await grantData(project, false);
    await project.build();
    const checked = await project.run(["check", "server/", "client/"]);
    assert.equal(checked.code, 0, checked.output);

    const post = (url: string, text: string) =>
      fetch(new URL("/api/notes", url), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text }),
      });
    const notes = async (url: string) => {
      const response = await fetch(new URL("/notes", url));
      assert.equal(response.status, 200);
      const html = await response.text();
      return [...html.matchAll(/<li>([^<]*)<\/li>/g)].map(([, text]) => text);
    };

    // Least privilege by default: no grant, no store, and the log line says what to add.
    const denied = await startServer({}, { cwd: project.dir });
    try {
      const response = await post(denied.url, "never kept");
      assert.equal(response.status, 500);
      await response.body?.cancel();
      await waitFor(denied.output, /add "data" to permissions\.app\.write in deno\.json/);
    } finally {
      await denied.stop();
    }

    await grantData(project, true);
    const first = await startServer({}, { cwd: project.dir });
    try {
      assert.deepEqual(await notes(first.url), []);
      for (const text of ["first note", "second note"]) {
        const response = await post(first.url, text);
        assert.equal(response.status, 201);
        assert.equal((await response.json()).key[0], "notes");
      }
      const bad = await post(first.url, "");
      assert.equal(bad.status, 400);
      assert.deepEqual(await bad.json(), { error: "text: expected 1 to 2000 characters" });
      assert.deepEqual(await notes(first.url), ["second note", "first note"]);
    } finally {
      await first.stop();
    }
    // On disk in the granted folder, not in memory or Deno's cache: a new server reads it back.
    assert.ok((await Deno.stat(`${project.dir}/data/kv.sqlite3`)).isFile);
    const second = await startServer({}, { cwd: project.dir });
    try {
      assert.deepEqual(await notes(second.url), ["second note", "first note"]);
    } finally {
      await second.stop();
    }
  },
});

/** Resolves once `read()` matches `pattern`, or throws with what it read after 10 s. */
async function waitFor(read: () => string, pattern: RegExp): Promise<void> {
  for (let i = 0; i < 200 && !pattern.test(read()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.match(read(), pattern);
}
