/**
 * `deno task start:parallel`: the launcher runs `deno serve --parallel` with two workers on one
 * port, with the same scoped permissions as `deno task start`. Both workers answer the page,
 * the tunnel forwards through either, and SIGTERM lets uploads still arriving finish in every
 * worker before the process exits 0.
 */
import assert from "node:assert/strict";
import denoJson from "../deno.json" with { type: "json" };
import { loadConfig } from "../server/lifecycle/config.ts";
import { servingArgs } from "../server/lifecycle/serve_args.ts";
import { startFakeIngest } from "./support/fake_ingest.ts";
import { startServer, startTaskArgs } from "./support/server.ts";
import { startUpload } from "./support/slow_upload.ts";

/** The serving step of `start:parallel` (after its build step), as `deno` arguments. */
function parallelTaskArgs(): string[] {
  const command = denoJson.tasks["start:parallel"].command;
  const serving = command.slice(command.lastIndexOf("&&") + 2).trim().split(/\s+/);
  return serving.slice(serving.indexOf("deno") + 1);
}

Deno.test("start:parallel runs the launcher, which grants deno serve the scoped permissions", () => {
  // The same launcher, flags and environment as `start`, asked for the parallel server.
  assert.deepEqual(parallelTaskArgs(), [...startTaskArgs(), "--parallel"]);
  const config = loadConfig({
    PORT: "9000",
    HOST: "::1",
    SENTRY_DSN: "https://k@o1.ingest.sentry.io/5",
  });
  const args = servingArgs(config, {}, { mode: "parallel" });
  assert.deepEqual(args.slice(0, 4), ["serve", "--parallel", "--host=[::1]", "--port=9000"]);
  assert.deepEqual(
    args.filter((a) => a.startsWith("--allow-")),
    servingArgs(config).filter((a) => a.startsWith("--allow-")),
  );
  assert.ok(args.includes("--allow-net=[::1]:9000,o1.ingest.sentry.io"), args.join(" "));
  assert.ok(!args.includes("--allow-net"), "never every host");
  assert.deepEqual(args.slice(-2), ["serve.ts", "--until-stdin-closes"]);
});

Deno.test("start:parallel serves the page and the tunnel from two workers", async () => {
  const args = parallelTaskArgs();
  await using ingest = startFakeIngest();
  const dsn = ingest.dsn("key", "3");
  const server = await startServer({
    DENO_JOBS: "2",
    SENTRY_DSN: dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0",
    DEBUG_ERROR_ROUTE: "true",
  }, { args });
  try {
    const page = await fetch(server.url);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<div id="root"[^>]*><div class="shell"/);
    // Which worker answered shows in the prefix Deno puts on each worker's console output, and
    // the debug route's failure is logged with console.error. A new connection per request lets
    // the kernel spread them over both workers.
    const workers = new Set<string>();
    for (let i = 0; i < 200 && workers.size < 2; i++) {
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

// Over the tunnel's 64 KiB threshold: read in pieces, then queued whole and sent.
const BODY_BYTES = 100 * 1024;
const FIRST_PART = 70 * 1024;

Deno.test("start:parallel: SIGTERM lets uploads still arriving finish in both workers, exit 0", async () => {
  const uploads = 8;
  await using ingest = startFakeIngest();
  const dsn = ingest.dsn("key", "4");
  const server = await startServer({
    DENO_JOBS: "2",
    SENTRY_DSN: dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0",
    // Every upload comes from 127.0.0.1: per-client limits off, or one client gets half the slots.
    TUNNEL_RATE_LIMIT: "0",
  }, { args: parallelTaskArgs() });
  try {
    // A worker that is still loading when the signal lands has nothing to drain, but the test
    // counts on both hearing it: wait until both say they are ready.
    for (let i = 0; i < 400; i++) {
      if ((server.output().match(/server: worker ready/g) ?? []).length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal((server.output().match(/server: worker ready/g) ?? []).length, 2, server.output());
    const started = await Promise.all(Array.from({ length: uploads }, (_, i) => {
      const head = `${JSON.stringify({ dsn })}\n{"type":"event"}\n{"message":"u${i} `;
      const body = head + "x".repeat(BODY_BYTES - head.length - 3) + '"}\n';
      return startUpload(server.url, new TextEncoder().encode(body), FIRST_PART);
    }));
    // Requests on later connections answered: the uploads' heads, sent before, were read.
    for (let i = 0; i < 4; i++) {
      const health = await fetch(`${server.url}healthz`);
      await health.body?.cancel();
    }
    assert.equal(ingest.started, 0, "no body is complete, so nothing is queued yet");
    server.process.kill("SIGTERM");
    // Every worker has heard the signal while every body is still short of its end.
    for (let i = 0; i < 400; i++) {
      if ((server.output().match(/server: stopping/g) ?? []).length === 2) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    assert.equal((server.output().match(/server: stopping/g) ?? []).length, 2, server.output());
    const answers = await Promise.all(started.map((upload) => upload.finish()));
    for (const answer of answers) assert.match(answer, /^HTTP\/1\.1 200 /, answer);
    await ingest.waitFor(uploads, "complete");
    assert.deepEqual(ingest.requests.map((r) => r.body.length), Array(uploads).fill(BODY_BYTES));
  } finally {
    const status = await server.stop("SIGTERM");
    assert.equal(status.code, 0, server.output());
  }
});
