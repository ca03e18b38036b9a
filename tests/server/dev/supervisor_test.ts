/**
 * `deno task dev` never dies of an error in the project, end to end in a throwaway copy: a syntax
 * error or a render error in client/App.tsx, a syntax error in a server module, and a module that
 * throws at import each leave the port answering with the error (file, line, message) on every
 * page and on `/_dev/reload`, printed once in the terminal, and the next good save recovers
 * without a restart of `deno task dev`.
 */
import assert from "node:assert/strict";
import {
  copyProject,
  openEvents,
  type ProjectCopy,
  type RunningDev,
  startDev,
} from "../../support/dev.ts";

/** Break `path` with `broken`, check the error is served and printed once, then restore it. */
async function breakAndRecover(
  project: ProjectCopy,
  dev: RunningDev,
  path: string,
  broken: string,
  expected: { line: number; message: RegExp },
): Promise<void> {
  const url = (p: string) => new URL(p, dev.url).href;
  const original = await project.read(path);
  let from = dev.output().length;
  await project.write(path, broken);
  const escaped = path.replaceAll(".", "\\.");
  await dev.waitForOutput(
    new RegExp(`dev: the server failed to start \\(${escaped}:${expected.line}:\\d+\\)`),
    from,
  );

  // Every page answers, on the same port, with the error's place and message.
  for (const page of ["/", "/any/other/page?x=1"]) {
    const response = await fetch(url(page));
    const html = await response.text();
    assert.equal(response.status, 500, html);
    assert.match(html, new RegExp(`${escaped}:${expected.line}:\\d+`));
    assert.match(html, expected.message);
    assert.match(html, /<script type="module" src="\/_dev\/client\.js" nonce="[^"]+">/);
  }
  // The dev routes stay up: the reload stream says what broke, the dev client is served.
  {
    await using events = await openEvents(url("/_dev/reload"));
    await events.next("hello");
    const { errors } = JSON.parse((await events.next("server-error")).data);
    assert.equal(errors[0].file, path);
    assert.equal(errors[0].line, expected.line);
    assert.match(errors[0].text, expected.message);
  }
  const client = await fetch(url("/_dev/client.js"));
  assert.match(await client.text(), /server-error/);
  // Printed once (by Deno), however often the error page is asked for.
  const printed = dev.output().slice(from);
  assert.equal(count(printed, /^error: /gm), 1, printed);
  assert.equal(count(printed, /dev: the server failed to start/g), 1, printed);

  // The next good save brings the server back, on the same port.
  from = dev.output().length;
  await project.write(path, original);
  const [, port] = await dev.waitForOutput(/Listening on http:\/\/127\.0\.0\.1:(\d+)\//, from);
  assert.equal(port, new URL(dev.url).port);
  const response = await fetch(url("/"));
  const html = await response.text();
  assert.equal(response.status, 200, html);
  assert.match(html, /<div class="shell"/);
}

function count(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].length;
}

/** `text` with `insert` put on a new line before the first line matching `before`. */
function insertBefore(text: string, before: RegExp, insert: string): [string, number] {
  const lines = text.split("\n");
  const index = lines.findIndex((line) => before.test(line));
  assert.ok(index >= 0, `${before} not found`);
  lines.splice(index, 0, insert);
  return [lines.join("\n"), index + 1];
}

Deno.test("deno task dev survives errors in App.tsx and server modules, and recovers", async (t) => {
  await using project = await copyProject();
  await using dev = await startDev(project.dir);
  const app = await project.read("client/App.tsx");

  await t.step("a syntax error in client/App.tsx", async () => {
    const [broken, line] = insertBefore(
      app,
      /const hydrated = useHydrated/,
      "  const dev_test = ;",
    );
    await breakAndRecover(project, dev, "client/App.tsx", broken, {
      line,
      message: /SyntaxError: Expression expected/,
    });
  });

  await t.step("App throws while the server renders it", async () => {
    const [broken, line] = insertBefore(
      app,
      /const hydrated = useHydrated/,
      '  if (app_test_always()) throw new Error("dev-test render boom");',
    );
    await breakAndRecover(
      project,
      dev,
      "client/App.tsx",
      `${broken}\nfunction app_test_always() {\n  return true;\n}\n`,
      { line, message: /Error: dev-test render boom/ },
    );
  });

  await t.step("a syntax error in server/http/app.ts", async () => {
    const source = await project.read("server/http/app.ts");
    const lines = source.split("\n").length;
    await breakAndRecover(project, dev, "server/http/app.ts", `${source}\nexport const = 1;\n`, {
      line: lines + 1,
      message: /SyntaxError/,
    });
  });

  await t.step("a server module that throws at import", async () => {
    const source = await project.read("server/page/csp.ts");
    const lines = source.split("\n").length;
    await breakAndRecover(
      project,
      dev,
      "server/page/csp.ts",
      `${source}\nthrow new Error("dev-test import boom");\n`,
      { line: lines + 1, message: /Error: dev-test import boom/ },
    );
  });

  const status = await dev.stop();
  assert.equal(status.code, 0, dev.output());
});
