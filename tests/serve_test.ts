/**
 * `deno task start:parallel`: `deno serve --parallel` with two workers on one port, started with
 * the task's own flags. Both workers answer the page, the tunnel forwards through either, and
 * SIGTERM stops them all.
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { startFakeIngest } from "./support/fake_ingest.ts";
import { startServer } from "./support/server.ts";

/** The serving step of `start:parallel` (after its build step), as `deno` arguments. */
function parallelTaskArgs(): string[] {
  const command = denoJson.tasks["start:parallel"].command;
  const serving = command.slice(command.lastIndexOf("&&") + 2).trim().split(/\s+/);
  return serving.slice(serving.indexOf("deno") + 1);
}

Deno.test("start:parallel serves the page and the tunnel from two workers", async () => {
  const args = parallelTaskArgs();
  assert.deepEqual(args.slice(0, 2), ["serve", "--parallel"]);
  assert.equal(args.at(-1), "serve.ts");

  await using ingest = startFakeIngest();
  const dsn = ingest.dsn("key", "3");
  const server = await startServer({
    DENO_JOBS: "2",
    DENO_SERVE_ADDRESS: "tcp:127.0.0.1:0",
    SENTRY_DSN: dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0",
    DEBUG_ERROR_ROUTE: "true",
  }, { args });
  try {
    const page = await fetch(server.url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="root"><div class="shell"/);
    // Which worker answered shows in the prefix Deno puts on each worker's console output, and
    // the debug route's failure is logged with console.error. A new connection per request lets
    // the kernel spread them over both workers.
    const workers = new Set<string>();
    for (let i = 0; i < 40 && workers.size < 2; i++) {
      const res = await fetch(new URL("/debug/error", server.url), {
        headers: { connection: "close" },
      });
      assert.equal(res.status, 500);
      await res.body?.cancel();
      for (
        const [, worker] of server.output().matchAll(/\[(serve-worker-\d+)\s*\] request failed/g)
      ) {
        workers.add(worker);
      }
    }
    assert.deepEqual([...workers].sort(), ["serve-worker-0", "serve-worker-1"], server.output());

    for (let i = 0; i < 4; i++) {
      const envelope = `${JSON.stringify({ dsn })}\n{"type":"event"}\n{"message":"m${i}"}\n`;
      const res = await fetch(new URL("/monitoring", server.url), {
        method: "POST",
        body: envelope,
        headers: { connection: "close" },
      });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    }
    // Next to the server SDK's own reports of the debug errors, with a `?sentry_key=` query.
    const tunnelled = async () => {
      const messages: string[] = [];
      for (const [, items] of await ingest.envelopes()) {
        for (const [, payload] of items) {
          const message = (payload as { message?: unknown }).message;
          if (typeof message === "string" && /^m\d$/.test(message)) messages.push(message);
        }
      }
      return messages.sort();
    };
    for (let i = 0; i < 100 && (await tunnelled()).length < 4; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(await tunnelled(), ["m0", "m1", "m2", "m3"]);
    assert.ok(ingest.requests.some((r) => r.path === "/api/3/envelope/"));
  } finally {
    const status = await server.stop("SIGTERM");
    assert.equal(status.code, 0, server.output());
  }
});
