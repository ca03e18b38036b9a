/**
 * Shutdown finishes what it accepted: the real server, started like `deno task start` (launcher
 * and main.ts), with uploads still arriving when the signal lands; and no server left behind
 * when the launcher, or the command above it, goes away.
 */
import assert from "node:assert/strict";
import { startFakeIngest } from "./support/fake_ingest.ts";
import { startServer } from "./support/server.ts";
import { startUpload } from "./support/slow_upload.ts";

const UPLOADS = 20;
// Over the tunnel's 64 KiB threshold: read in pieces, all at once.
const BODY_BYTES = 100 * 1024;
const FIRST_PART = 70 * 1024;

function envelope(dsn: string, i: number): Uint8Array {
  const head = `${JSON.stringify({ dsn })}\n{"type":"event"}\n{"message":"upload ${i} `;
  const tail = `"}\n`;
  const fill = "x".repeat(BODY_BYTES - head.length - tail.length);
  return new TextEncoder().encode(head + fill + tail);
}

async function waitFor(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

Deno.test("SIGTERM with 20 uploads still arriving: all 20 are forwarded and answered 200, exit 0", async () => {
  await using ingest = startFakeIngest();
  const dsn = ingest.dsn("key", "7");
  // Every upload comes from 127.0.0.1: per-client limits off, or one client gets half the slots.
  const server = await startServer({
    SENTRY_DSN: dsn,
    SENTRY_TRACES_SAMPLE_RATE: "0",
    TUNNEL_RATE_LIMIT: "0",
  });
  try {
    const uploads = await Promise.all(
      Array.from(
        { length: UPLOADS },
        (_, i) => startUpload(server.url, envelope(dsn, i), FIRST_PART),
      ),
    );
    // A request on a later connection answered: the uploads' heads, sent before, were read.
    const health = await fetch(`${server.url}healthz`);
    await health.body?.cancel();
    assert.equal(ingest.started, 0, "no body is complete, so nothing is queued yet");

    server.process.kill("SIGTERM");
    // The server has heard the signal while every body is still short of its end.
    await waitFor(() => /server: stopping \(20 requests in flight\)/.test(server.output()), "stop");
    const answers = await Promise.all(uploads.map((upload) => upload.finish()));

    for (const answer of answers) assert.match(answer, /^HTTP\/1\.1 200 /, answer);
    await ingest.waitFor(UPLOADS, "complete");
    assert.equal(ingest.incomplete, 0);
    const forwarded = ingest.requests.map((r) => r.body.length);
    assert.deepEqual(forwarded, Array(UPLOADS).fill(BODY_BYTES));
  } finally {
    const status = await server.stop("SIGTERM");
    assert.equal(status.code, 0, server.output());
  }
});
