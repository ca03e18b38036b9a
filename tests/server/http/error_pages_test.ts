import assert from "node:assert/strict";
import { lastResortResponse, withLastResort } from "../../../server/http/error_pages.ts";

const info = {} as Deno.ServeHandlerInfo;

// Collects console.error output for the duration of `run`.
async function capturingErrors(run: () => void | Promise<void>): Promise<unknown[][]> {
  const logged: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => logged.push(args);
  try {
    await run();
  } finally {
    console.error = original;
  }
  return logged;
}

Deno.test("lastResortResponse: logs the error and answers the generic 500 page", async () => {
  let res!: Response;
  const logged = await capturingErrors(() => {
    res = lastResortResponse(new Error("secret detail"));
  });
  assert.equal(res.status, 500);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  const body = await res.text();
  assert.ok(!body.includes("secret detail"), "no detail reaches the client");
  assert.equal(logged.length, 1);
  assert.match(
    String(logged[0][0]),
    /^request failed outside the app's handler: Error: secret detail\n {4}at /,
  );
});

Deno.test("withLastResort: sync throws and rejections become the 500 page; answers pass through", async () => {
  const ok = new Response("fine");
  const logged = await capturingErrors(async () => {
    const thrown = withLastResort(() => {
      throw new Error("sync");
    });
    const rejected = withLastResort(() => Promise.reject(new Error("async")));
    assert.equal((await thrown(new Request("http://x/"), info)).status, 500);
    assert.equal((await rejected(new Request("http://x/"), info)).status, 500);
    assert.equal(await withLastResort(() => ok)(new Request("http://x/"), info), ok);
    assert.equal(
      await withLastResort(() => Promise.resolve(ok))(new Request("http://x/"), info),
      ok,
    );
  });
  assert.deepEqual(logged.map((args) => String(args[0]).split("\n")[0]), [
    "request failed outside the app's handler: Error: sync",
    "request failed outside the app's handler: Error: async",
  ]);
});
