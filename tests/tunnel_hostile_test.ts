/**
 * The tunnel under hostile uploads, against the real server in its own process: memory stays
 * flat and no connection is kept over thousands of stalled, aborted and refused uploads. (Bodies
 * sent one byte at a time: tests/hostile_bodies_test.ts.)
 */
import assert from "node:assert/strict";
import { loadConfig } from "../server/lifecycle/config.ts";
import { STDIN_LIFELINE_FLAG } from "../server/constants.ts";
import { servingArgs } from "../server/lifecycle/serve_args.ts";
import { type RunningServer, startServer } from "./support/server.ts";
import { exchangeRaw } from "./support/raw_exchange.ts";

const ALLOWED_DSN = "http://public@127.0.0.1:9/1"; // nothing listens on port 9: upstream fails
const encoder = new TextEncoder();

/**
 * main.ts itself (not the launcher), so its pid is the server's. Without the launcher there
 * is no stdin lifeline to hold open.
 */
function startTunnelServer(env: Record<string, string>): Promise<RunningServer> {
  const full = { TUNNEL_ALLOWED_DSNS: ALLOWED_DSN, ...env };
  const args = servingArgs(loadConfig({ ...full, PORT: "0", HOST: "127.0.0.1" }))
    .filter((arg) => arg !== STDIN_LIFELINE_FLAG);
  return startServer(full, { args });
}

async function rssKiB(pid: number): Promise<number> {
  const { stdout } = await new Deno.Command("ps", { args: ["-o", "rss=", "-p", String(pid)] })
    .output();
  return Number(new TextDecoder().decode(stdout).trim());
}

/** Send `parts` and return the status line's code (0 if none within 10 s). */
async function exchange(
  port: number,
  parts: Uint8Array[],
  { waitForAnswer = true } = {},
): Promise<number> {
  if (waitForAnswer) {
    const outcome = await exchangeRaw(port, parts, 10_000);
    return outcome.kind === "response" ? outcome.status : 0;
  }
  // Leave mid-body, without waiting for an answer.
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    for (const part of parts) await conn.write(part);
  } finally {
    conn.close();
  }
  return 0;
}

const envelopeHead = encoder.encode(`{"dsn":"${ALLOWED_DSN}"}\n{"type":"event"}\n`);

/** One upload of each kind the memory test repeats; each resolves to its status. */
const uploads: Record<string, (port: number) => Promise<number>> = {
  // Stalls mid-body until the tunnel's 408, with and without a Content-Length.
  stalledSized: (port) =>
    exchange(port, [
      encoder.encode("POST /monitoring HTTP/1.1\r\nHost: a\r\nContent-Length: 2000\r\n\r\n"),
      envelopeHead,
    ]),
  stalledChunked: (port) =>
    exchange(port, [
      encoder.encode("POST /monitoring HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"),
      encoder.encode(`${envelopeHead.byteLength.toString(16)}\r\n`),
      envelopeHead,
      encoder.encode("\r\n"),
    ]),
  // Leaves mid-body without waiting for an answer.
  aborted: (port) =>
    exchange(port, [
      encoder.encode("POST /monitoring HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"),
      encoder.encode(`${envelopeHead.byteLength.toString(16)}\r\n`),
      envelopeHead,
    ], { waitForAnswer: false }),
  tooLarge: (port) =>
    exchange(port, [
      encoder.encode("POST /monitoring HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999\r\n\r\n"),
    ]),
  // A whole envelope for an ingest that cannot be reached: queued (200), held in the queue.
  upstreamDown: (port) =>
    exchange(port, [
      encoder.encode(
        `POST /monitoring HTTP/1.1\r\nHost: a\r\nConnection: close\r\n` +
          `Content-Length: ${envelopeHead.byteLength}\r\n\r\n`,
      ),
      envelopeHead,
    ]),
};

// What each kind may answer. A stall ends only at the tunnel's 408, an oversized body is refused
// before it is read, an aborted upload waits for nothing. A whole envelope for an ingest nobody
// listens for is queued (200; about 1 KiB each, a few MB in all), unless the 100 ms deadline
// passes first on a busy machine (408 before the body is read).
const ANSWERS: Record<string, readonly number[]> = {
  stalledSized: [408],
  stalledChunked: [408],
  aborted: [0],
  tooLarge: [413],
  upstreamDown: [200, 408],
};

// Uploads after the warm-up, and how many of them leave a read pending on the server (the
// stalled and aborted ones: four of every seven below).
const MEASURED_UPLOADS = 6_000;
const PENDING_READS = Math.floor(MEASURED_UPLOADS * 4 / 7);
// What one such upload retained when the tunnel leaked (a Deno read op kept alive with its
// 64 KiB buffer, Deno 2.9): about 30 KB of RSS each, so a leak adds over 100 MB here. Without
// one, RSS moved less than 10 MB over 10,000 uploads after the warm-up (V8 holds its heap and
// the garbage outside it at its GC thresholds). The bound sits halfway, far from both.
const LEAK_KB_PER_UPLOAD = 30;
const MAX_GROWTH_MIB = PENDING_READS * LEAK_KB_PER_UPLOAD / 1024 / 2;

async function openFiles(pid: number): Promise<number> {
  const { stdout } = await new Deno.Command("ls", { args: [`/proc/${pid}/fd`] }).output();
  return new TextDecoder().decode(stdout).split("\n").filter(Boolean).length;
}

Deno.test({
  name: "memory stays flat over 6,000 more stalled, aborted, oversized and failed uploads",
  sanitizeResources: false, // the child's pipes are closed by stop()
  async fn() {
    const server = await startTunnelServer({
      BODY_READ_TIMEOUT_MS: "100",
      TUNNEL_RATE_LIMIT: "0",
    });
    try {
      const port = Number(new URL(server.url).port);
      const pid = server.process.pid;
      // Streamed bodies twice over: stalled and aborted ones are where a leak would show.
      const kinds = [...Object.keys(uploads), "stalledChunked", "aborted"];
      const batch = (size: number) =>
        Promise.all(Array.from({ length: size }, async (_, i) => {
          const kind = kinds[i % kinds.length];
          return `${kind} ${await uploads[kind](port)}`;
        }));
      for (const answer of await batch(200)) {
        const [kind, status] = answer.split(" ");
        assert.ok(ANSWERS[kind].includes(Number(status)), answer);
      }
      // Warm-up: V8 lets its heap and the garbage outside it (read buffers) grow to its GC
      // thresholds first, about +80 MB over the first few thousand uploads, then holds.
      for (let i = 0; i < 2400; i += 200) await batch(200);
      const warm = await rssKiB(pid);
      const filesWarm = await openFiles(pid);
      for (let i = 0; i < MEASURED_UPLOADS; i += 200) await batch(200);
      // Retained work, counted: every upload's connection is closed once its client has gone
      // (a leak would hold thousands; a few may still be closing).
      let files = await openFiles(pid);
      for (let tries = 0; files > filesWarm + 8 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        files = await openFiles(pid);
      }
      assert.ok(files <= filesWarm + 8, `${filesWarm} open files after the warm-up, ${files} now`);
      const grownMiB = (await rssKiB(pid) - warm) / 1024;
      assert.ok(
        grownMiB < MAX_GROWTH_MIB,
        `RSS grew ${grownMiB.toFixed(1)} MiB, over ${MAX_GROWTH_MIB.toFixed(0)} MiB`,
      );
    } finally {
      await server.stop();
    }
  },
});
