/**
 * `deno task dev` end to end, in a throwaway copy of the project: a client change is rebuilt and
 * served without a restart and open pages are told to reload; a build error reaches them with its
 * file and line, and fixing the file recovers.
 */
import assert from "node:assert/strict";
import { copyProject, openEvents, startDev } from "../../support/dev.ts";

Deno.test("deno task dev: rebuild, reload event, build error with file and line, recovery", async () => {
  await using project = await copyProject();
  await using dev = await startDev(project.dir);
  const url = (path: string) => new URL(path, dev.url).href;
  assert.match(dev.output(), /watching client\//, "says what it watches");

  const first = await readPage(url("/"));
  // The dev client script is external and carries the request's nonce, like the app's script.
  assert.equal(first.devScript?.nonce, first.nonce);
  const devClient = await fetch(url("/_dev/client.js"));
  assert.equal(devClient.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.match(await devClient.text(), /EventSource\("\/_dev\/reload"\)/);
  // Unminified, with a linked source map that is served.
  const bundle = await (await fetch(url(first.script))).text();
  assert.match(bundle, /\n {2}\S/, "indented, not minified");
  const map = /\/\/# sourceMappingURL=(\S+)/.exec(bundle)?.[1];
  assert.ok(map, "links a source map");
  const mapResponse = await fetch(new URL(map, url(first.script)));
  await mapResponse.body?.cancel();
  assert.equal(mapResponse.status, 200);

  await using events = await openEvents(url("/_dev/reload"));
  await events.next("hello");
  const main = await project.read("client/main.tsx");

  // A client change: rebuilt, swapped in without a restart, then `reload`.
  let from = events.events.length;
  await project.write("client/main.tsx", `${main}\nconsole.debug("dev-test-marker-1");\n`);
  await events.next("reload", from);
  const second = await readPage(url("/"));
  assert.notEqual(second.script, first.script);
  assert.match(await (await fetch(url(second.script))).text(), /dev-test-marker-1/);

  // A syntax error: the event names the file and line, and the terminal shows it too.
  from = events.events.length;
  const broken = `${main}\nconst = "dev-test-marker-2";\n`;
  await project.write("client/main.tsx", broken);
  const { errors } = JSON.parse((await events.next("build-error", from)).data);
  assert.equal(errors[0].file, "client/main.tsx");
  assert.equal(errors[0].line, broken.split("\n").indexOf('const = "dev-test-marker-2";') + 1);
  assert.match(errors[0].lineText, /dev-test-marker-2/);
  await dev.waitForOutput(/client\/main\.tsx:\d+:\d+/);
  // A page opened while the build is broken is told at once.
  {
    await using late = await openEvents(url("/_dev/reload"));
    await late.next("build-error");
  }
  // The last good build is still served.
  assert.equal((await readPage(url("/"))).script, second.script);

  // The fix: `reload`, and the fixed bundle.
  from = events.events.length;
  await project.write("client/main.tsx", `${main}\nconsole.debug("dev-test-marker-3");\n`);
  await events.next("reload", from);
  const third = await readPage(url("/"));
  assert.match(await (await fetch(url(third.script))).text(), /dev-test-marker-3/);

  await events.close();
  const status = await dev.stop();
  assert.equal(status.code, 0, dev.output());
});

interface Page {
  readonly nonce: string;
  readonly script: string;
  readonly devScript?: { readonly nonce: string };
}

async function readPage(url: string): Promise<Page> {
  const html = await (await fetch(url)).text();
  const scripts = [...html.matchAll(/<script type="module" src="([^"]+)" nonce="([^"]+)">/g)];
  const app = scripts.find(([, src]) => src.startsWith("/build/"));
  const dev = scripts.find(([, src]) => src === "/_dev/client.js");
  assert.ok(app, html);
  return { script: app[1], nonce: app[2], devScript: dev && { nonce: dev[2] } };
}
