/**
 * The system under fuzz: the real server (as `deno task start` runs it) with monitoring on,
 * its SENTRY_DSN pointing at a fake ingest on 127.0.0.1, plus what the generator needs to know
 * about it. Envelopes reach that ingest two ways, and both are told apart and proven to work
 * before fuzzing starts: the tunnel forwarding a browser envelope, and the server's own SDK.
 *
 * @example
 * await using target = await startFuzzTarget();
 * target.ingestArrivals(); // [] while nothing was reported
 */
import { brotliCompressSync } from "node:zlib";
import { indexStaticFiles } from "../../server/http/static_files.ts";
import type { Envelope } from "@sentry/core";
import {
  decodeEnvelope,
  type FakeIngest,
  type ReceivedRequest,
  startFakeIngest,
} from "./fake_ingest.ts";
import { exchangeRaw } from "./raw_exchange.ts";
import { bytesToLatin1, type RequestSpace } from "./raw_request.ts";
import { type RunningServer, startServer } from "./server.ts";

/** Which sender an envelope at the ingest came from. */
export type IngestSource = "tunnel" | "sdk";

/** One request that reached the fake ingest, summarised for a failure message. */
export interface IngestArrival {
  readonly source: IngestSource;
  /** Item types and, for events, the exception, e.g. `event TypeError: Invalid URL`. */
  readonly summary: string;
}

/** A running server and fake ingest, ready to be fuzzed. */
export interface FuzzTarget extends AsyncDisposable {
  readonly port: number;
  readonly space: RequestSpace;
  /** Every static path the server serves (with the leading slash). */
  readonly staticPaths: ReadonlySet<string>;
  readonly server: RunningServer;
  readonly ingest: FakeIngest;
  /** What reached the ingest after the start-up canaries. */
  ingestArrivals(): Promise<IngestArrival[]>;
  /** GET / over a raw socket; true when it answered 200. */
  answersHome(timeoutMs: number): Promise<boolean>;
  /** Stop the server with SIGTERM, which flushes the SDK's queue to the ingest. */
  stop(): Promise<void>;
}

/** The wait for a body that never comes (BODY_READ_TIMEOUT_MS, then 408) and for the ingest's
 * answer: short, so such a case is answered in time. */
export const TUNNEL_TIMEOUT_MS = 500;

/** Start the server and ingest, and check both envelope routes reach the ingest. */
export async function startFuzzTarget(): Promise<FuzzTarget> {
  const ingest = startFakeIngest();
  const dsn = ingest.dsn("public", "1");
  const server = await startServer({
    SENTRY_DSN: dsn,
    // Unsampled: a transaction per page request would be traffic the fuzz did not cause.
    SENTRY_TRACES_SAMPLE_RATE: "0",
    BODY_READ_TIMEOUT_MS: String(TUNNEL_TIMEOUT_MS),
    // Off: past 600 envelopes a minute every case would meet the 429 before the checks the fuzz
    // is for (the DSN, the header, the framing). The limit has tests of its own.
    TUNNEL_RATE_LIMIT: "0",
  });
  const port = Number(new URL(server.url).port);
  const index = await indexStaticFiles("static", { serveSourceMaps: false });
  const staticPaths = new Set([...index.keys()].map((path) => `/${path}`));
  const space: RequestSpace = {
    port,
    staticPaths: [...staticPaths].filter((p) => !p.includes("LEGAL")).slice(0, 12),
    nearMissDsns: nearMissDsns(ingest.port),
    compressedBodies: await compressedBodies(nearMissDsns(ingest.port)[0]),
  };
  const canaries = await sendCanaries(port, dsn, ingest);
  const answersHome = async (timeoutMs: number) => {
    const request = new TextEncoder().encode("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    const outcome = await exchangeRaw(port, [request], timeoutMs);
    return outcome.kind === "response" && outcome.status === 200;
  };
  const stop = async () => {
    await server.stop("SIGTERM");
  };
  return {
    port,
    space,
    staticPaths,
    server,
    ingest,
    ingestArrivals: () => Promise.all(ingest.requests.slice(canaries).map(describeArrival)),
    answersHome,
    stop,
    async [Symbol.asyncDispose]() {
      await server.stop();
      await ingest.close();
    },
  };
}

/** Whether a request at the ingest came from the server's SDK (it authenticates in the query). */
export function ingestSource(request: ReceivedRequest): IngestSource {
  const query = request.path.split("?")[1] ?? "";
  return new URLSearchParams(query).has("sentry_key") ? "sdk" : "tunnel";
}

// One envelope through the tunnel and one transaction from the SDK (a sampled incoming trace
// is continued even at sample rate 0): proof that the ingest sees both senders, and tells them
// apart, before the campaign relies on it seeing nothing.
async function sendCanaries(port: number, dsn: string, ingest: FakeIngest): Promise<number> {
  const envelope = `${JSON.stringify({ dsn })}\n{"type":"event"}\n{"message":"fuzz canary"}`;
  const post =
    `POST /monitoring HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${envelope.length}` +
    `\r\n\r\n${envelope}`;
  const trace = `${"a".repeat(32)}-${"b".repeat(16)}-1`;
  const get = `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nsentry-trace: ${trace}\r\n\r\n`;
  for (const raw of [post, get]) {
    const outcome = await exchangeRaw(port, [new TextEncoder().encode(raw)], 10_000);
    if (outcome.kind !== "response" || outcome.status !== 200) {
      throw new Error(
        `fuzz canary ${raw.split(" ", 2).join(" ")} failed: ${JSON.stringify(outcome)}`,
      );
    }
  }
  await ingest.waitFor(2, "complete");
  const sources = ingest.requests.map(ingestSource).sort();
  if (sources.join() !== "sdk,tunnel") {
    throw new Error(`fuzz canaries reached the ingest as ${sources.join()}, not sdk and tunnel`);
  }
  return ingest.requests.length;
}

// Whatever arrived is the finding, so bytes that are no envelope are shown, not thrown.
async function describeArrival(request: ReceivedRequest): Promise<IngestArrival> {
  let items: Envelope[1];
  try {
    items = (await decodeEnvelope(request))[1];
  } catch (error) {
    const head = JSON.stringify(new TextDecoder().decode(request.body.subarray(0, 300)));
    const encoding = request.headers.get("content-encoding") ?? "none";
    return {
      source: ingestSource(request),
      summary: `unparseable (${String(error)}; encoding ${encoding}): ${head}`,
    };
  }
  const parts = items.map(([header, payload]) => {
    const type = String(header.type);
    const exception = (payload as { exception?: { values?: { type?: string; value?: string }[] } })
      ?.exception?.values?.[0];
    return exception ? `${type} ${exception.type}: ${exception.value}` : type;
  });
  return { source: ingestSource(request), summary: parts.join(", ") || "(no items)" };
}

// Like the server's own DSN in every part but one: the tunnel must refuse each of them.
function nearMissDsns(ingestPort: number): string[] {
  const at = `127.0.0.1:${ingestPort}`;
  return [
    `http://publik@${at}/1`,
    `http://public@${at}/2`,
    `http://public@127.0.0.1:${ingestPort + 1}/1`,
    `https://public@${at}/1`,
    `http://public@localhost:${ingestPort}/1`,
    `http://public@${at}/x/1`,
    `http://public@${at}/1/`,
    `http://public:secret@${at}/1`,
    `http://public:%73@${at}/1`,
    `http://PUBLIC@${at}/1`,
    "constructor",
    "",
  ];
}

async function compressedBodies(dsn: string): Promise<{ encoding: string; body: string }[]> {
  const text = new TextEncoder().encode(`${JSON.stringify({ dsn })}\n{"type":"event"}\n{}`);
  // Fixed bytes, so a seed replays the same bodies.
  const junk = Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + 11) & 0xff);
  const gzip = await compress(text, "gzip");
  return [
    { encoding: "gzip", body: bytesToLatin1(gzip) },
    { encoding: "gzip", body: bytesToLatin1(gzip.subarray(0, gzip.length >> 1)) },
    { encoding: "deflate", body: bytesToLatin1(await compress(text, "deflate")) },
    { encoding: "br", body: bytesToLatin1(brotliCompressSync(text)) },
    { encoding: "br", body: bytesToLatin1(junk) },
    { encoding: "gzip", body: bytesToLatin1(junk) },
  ];
}

async function compress(bytes: Uint8Array<ArrayBuffer>, format: CompressionFormat) {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream(format));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
