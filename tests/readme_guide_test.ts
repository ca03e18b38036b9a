/**
 * The README's "Building on the shell" steps, followed literally in a copy of the project: its
 * code blocks are taken from the README and put where the text says, then the copy is built and
 * served as `deno task start` does, on 127.0.0.1 port 0.
 */
import assert from "node:assert/strict";
import { copyProject } from "./support/dev.ts";
import type { Event } from "@sentry/core";
import { collectOutput, inheritedEnv, startTaskArgs, startTaskEnv } from "./support/server.ts";
import { startFakeIngest } from "./support/fake_ingest.ts";

const START_TIMEOUT_MS = 30_000;

/** The code blocks of each `###` step in the README's "Building on the shell" section. */
function guideSteps(readme: string): Map<string, string[]> {
  const section = readme.split("\n## Building on the shell\n")[1]?.split("\n## ")[0];
  assert.ok(section, "the README has a Building on the shell section");
  const steps = new Map<string, string[]>();
  for (const part of section.split("\n### ").slice(1)) {
    const title = part.slice(0, part.indexOf("\n"));
    const blocks = [...part.matchAll(/^( *)```\w*\n([\s\S]*?)^\1```$/gm)].map(([, indent, code]) =>
      code.split("\n").map((line) => line.slice(indent.length)).join("\n")
    );
    steps.set(title, blocks);
  }
  return steps;
}

function insertAfter(text: string, matches: (line: string) => boolean, insert: string): string {
  const lines = text.split("\n");
  let at = -1;
  lines.forEach((line, i) => {
    if (matches(line)) at = i;
  });
  assert.ok(at >= 0, `no line to insert after for:\n${insert}`);
  lines.splice(at + 1, 0, insert.trimEnd());
  return lines.join("\n");
}

Deno.test({
  name: "README: a page, an API route and a style added as the guide says work when served",
  // The copy's server is stopped before the test ends; Deno's child pipes close with it.
  sanitizeResources: false,
  async fn() {
    const steps = guideSteps(await Deno.readTextFile("README.md"));
    await using project = await copyProject();

    // Add a page: the component file, then its import and its entry in client/routes.tsx.
    const [pageFile, importLine, entryLine] = steps.get("Add a page") ?? [];
    assert.ok(pageFile && importLine && entryLine, "three code blocks in Add a page");
    await project.write("client/pages/about.tsx", pageFile);
    let routes = await project.read("client/routes.tsx");
    routes = insertAfter(routes, (l) => l.startsWith("import "), importLine);
    routes = insertAfter(routes, (l) => l.trim() === "pages: [", entryLine);
    await project.write("client/routes.tsx", routes);

    // Add an API route: one entry in server/api/routes.ts.
    const [apiEntry] = steps.get("Add an API route") ?? [];
    assert.ok(apiEntry, "a code block in Add an API route");
    const api = await project.read("server/api/routes.ts");
    await project.write(
      "server/api/routes.ts",
      insertAfter(api, (l) => l.startsWith("export const apiRoutes"), apiEntry),
    );

    // Styles: the rule appended to client/styles.css.
    const [css] = steps.get("Styles") ?? [];
    assert.ok(css, "a code block in Styles");
    await project.write("client/styles.css", `${await project.read("client/styles.css")}\n${css}`);

    await using served = await buildAndServe(project.dir);
    const base = served.url;
    const get = (path: string) => fetch(new URL(path, base));

    const about = await get("/about");
    assert.equal(about.status, 200);
    const html = await about.text();
    assert.match(html, /<title>About<\/title>/);
    assert.match(html, /<main class="shell-main"><h1>About this app<\/h1><\/main>/);
    const home = await get("/");
    assert.equal(home.status, 200);
    assert.match(await home.text(), /It works/);
    const slash = await fetch(new URL("/about/", base), { redirect: "manual" });
    assert.equal(slash.status, 308);
    assert.equal(slash.headers.get("location"), "/about");
    const missing = await get("/about/us");
    assert.equal(missing.status, 404);
    assert.match(await missing.text(), /<div class="shell".*Not found/s);

    const hello = await get("/api/hello");
    assert.equal(hello.status, 200);
    assert.deepEqual(await hello.json(), { hello: "world" });
    assert.equal(hello.headers.get("x-content-type-options"), "nosniff");
    const unknown = await get("/api/nope");
    assert.equal(unknown.status, 404);
    assert.deepEqual(await unknown.json(), { error: "not found" });

    const href = /<link rel="stylesheet" href="(\/build\/main-[A-Z0-9]+\.css)">/.exec(html)?.[1];
    assert.ok(href, "the page links the hashed stylesheet");
    const stylesheet = await get(href);
    assert.match(stylesheet.headers.get("cache-control") ?? "", /immutable/);
    assert.match(await stylesheet.text(), /letter-spacing:-\.01em/);
  },
});

Deno.test({
  name: "README: Sentry in server code, as the guide says: what arrives, and what does not",
  sanitizeResources: false,
  async fn() {
    const steps = guideSteps(await Deno.readTextFile("README.md"));
    await using project = await copyProject();
    const [handlerFile, importLine, entryLine] = steps.get("Use Sentry in server code") ?? [];
    assert.ok(handlerFile && importLine && entryLine, "three code blocks in Use Sentry");
    await project.write("server/api/checkout.ts", handlerFile);
    let api = await project.read("server/api/routes.ts");
    api = insertAfter(api, (l) => l.startsWith("import "), importLine);
    api = insertAfter(api, (l) => l.startsWith("export const apiRoutes"), entryLine);
    await project.write("server/api/routes.ts", api);

    await using ingest = startFakeIngest();
    {
      await using served = await buildAndServe(project.dir, {
        SENTRY_DSN: ingest.dsn("key", "5"),
        SENTRY_TRACES_SAMPLE_RATE: "1",
      });
      const res = await fetch(new URL("/api/checkout?coupon=secret", served.url), {
        method: "POST",
        headers: { cookie: "session=s3cret", authorization: "Bearer t0ken" },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { total: 42 });
    } // SIGTERM: the server flushes what it holds before it exits.
    const items: [string, Event][] = [];
    for (const [, list] of await ingest.envelopes()) {
      for (const [header, payload] of list) items.push([String(header.type), payload as Event]);
    }
    const event = items.find(([type]) => type === "event")?.[1];
    const transaction = items.find(([type]) => type === "transaction")?.[1];
    assert.ok(event && transaction, JSON.stringify(items.map(([type]) => type)));
    assert.equal(event.exception?.values?.[0]?.value, "card declined");
    assert.equal(event.tags?.plan, "pro");
    assert.equal(event.user?.id, "user-42");
    assert.equal(event.request?.method, "POST");
    assert.match(event.request?.url ?? "", /^http:\/\/127\.0\.0\.1:\d+\/api\/checkout$/);
    assert.equal(event.contexts?.trace?.trace_id, transaction.contexts?.trace?.trace_id);
    assert.equal(transaction.transaction, "POST /api/checkout");
    assert.deepEqual(transaction.spans?.map((s) => s.description), ["price the cart"]);
    assert.equal(transaction.spans?.[0].parent_span_id, transaction.contexts?.trace?.span_id);
    // Scrubbed by default: no cookie, credentials, query string or client address anywhere.
    const sent = JSON.stringify(items);
    for (const secret of ["s3cret", "t0ken", "coupon", '127.0.0.1","ip_address']) {
      assert.ok(!sent.includes(secret), `${secret} was sent`);
    }
    assert.equal(event.user?.ip_address, undefined, "no client address");
  },
});

/**
 * Build the project copy in `dir` and serve it as `deno task start` does, on 127.0.0.1 port 0;
 * disposing it stops the server with SIGTERM and waits for it to exit.
 */
async function buildAndServe(dir: string, env: Record<string, string> = {}) {
  const build = await new Deno.Command(Deno.execPath(), {
    args: ["task", "build"],
    cwd: dir,
    env: { ...inheritedEnv(), NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
  }).output();
  assert.equal(build.code, 0, new TextDecoder().decode(build.stderr));

  const child = new Deno.Command(Deno.execPath(), {
    args: startTaskArgs(),
    cwd: dir,
    env: {
      ...inheritedEnv(),
      ...startTaskEnv(),
      PORT: "0",
      HOST: "127.0.0.1",
      NO_COLOR: "1",
      ...env,
    },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let listening = (_: string) => {};
  const url = new Promise<string>((resolve) => listening = resolve);
  const { text, done } = collectOutput(child, () => {
    const match = /Listening on (http:\/\/127\.0\.0\.1:\d+\/)/.exec(text());
    if (match) listening(match[1]);
  });
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch {
      // Already exited.
    }
    await child.status;
    await done;
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const base = await Promise.race([
      url,
      new Promise<never>((_, reject) =>
        timer = setTimeout(() => reject(new Error(`not started:\n${text()}`)), START_TIMEOUT_MS)
      ),
    ]);
    return { url: base, output: text, [Symbol.asyncDispose]: stop };
  } catch (error) {
    await stop();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
