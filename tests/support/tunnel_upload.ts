/**
 * Helpers for the tunnel handler's tests: a tunnel on loopback forwarding with fetch,
 * envelopes to send it, ways to upload them (whole, chunked, raw over TCP) and to judge the answer.
 */
import { exchangeRaw } from "./raw_exchange.ts";
import assert from "node:assert/strict";
import { type Dsn, parseDsn } from "../../server/dsn.ts";
import { BODY_DEFAULTS, createBodyBudget } from "../../server/http/body_budget.ts";
import { createTunnelHandler, type TunnelOptions } from "../../server/tunnel/handler.ts";
import {
  createDeliveryQueue,
  type DeliveryOptions,
  type DeliveryQueue,
} from "../../server/delivery/queue.ts";

/** One mebibyte, the unit of every body size in the tunnel tests. */
export const MiB = 1024 * 1024;

/**
 * Register a tunnel test with the op and resource sanitizers on. Deno 2 runs tests without
 * them unless asked; the tunnel promises that nothing leaks (timers, request bodies, upstream
 * requests), so its tests ask.
 */
export function test(name: string, fn: () => Promise<void>) {
  Deno.test({ name, sanitizeOps: true, sanitizeResources: true, fn });
}

/** A budget for bodies in flight with the default settings; per-client limits off unless asked. */
export function defaultBodies(clientLimits = false) {
  return createBodyBudget({ ...BODY_DEFAULTS, clientLimits });
}

/** One refusal of the tunnel: what it put in `ctx.refused` (the app's refusal log counts it),
 * with the status it answered. */
export interface LogLine {
  readonly reason: string;
  readonly status: number;
  readonly bytes?: number;
}

type TunnelHandler = ReturnType<typeof createTunnelHandler>;

/** Call `handler` as the app does, pushing each refusal it reports to `logs`. */
export function recordingRefusals(handler: TunnelHandler, logs: LogLine[]) {
  return async (req: Request, info: Deno.ServeHandlerInfo) => {
    const ctx: Parameters<TunnelHandler>[2] = {};
    const response = await handler(req, info, ctx);
    if (ctx.refused) logs.push({ ...ctx.refused, status: response.status });
    return response;
  };
}

/** A tunnel serving on 127.0.0.1, its URL and port, and the refusals it reported. */
export interface Tunnel extends AsyncDisposable {
  readonly url: string;
  readonly port: number;
  readonly logs: LogLine[];
  /** Requests whose head reached the tunnel's handler so far. */
  readonly requests: number;
  /** The tunnel's delivery queue (its own, closed on dispose). */
  readonly delivery: DeliveryQueue;
  /** Lines the delivery queue logged. */
  readonly deliveryLogs: string[];
}

/** Start a tunnel on 127.0.0.1 port 0 that forwards for `allowed` DSNs; `options` override, and
 * `queue` sets its delivery queue's (retries after 20 ms, doubling to 200 ms, unless it says). */
export function startTunnel(
  allowed: readonly string[],
  options: Partial<TunnelOptions> & { readonly fetch?: typeof fetch } = {},
  queue: Partial<DeliveryOptions> = {},
): Tunnel {
  const logs: LogLine[] = [];
  const deliveryLogs: string[] = [];
  const delivery = createDeliveryQueue({
    dsns: allowed.map(mustParse),
    maxBytes: 64 * MiB,
    maxAgeMs: 3_600_000,
    backoffMs: [20, 200],
    fetch: options.fetch,
    log: (line) => deliveryLogs.push(line),
    ...queue,
  });
  const handler = createTunnelHandler({
    delivery,
    allowedDsns: allowed.map(mustParse),
    maxBodyBytes: 8 * MiB,
    trustProxy: false,
    bodies: defaultBodies((options.rateLimit ?? 0) > 0),
    ...options,
  });
  const recorded = recordingRefusals(handler, logs);
  let requests = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req, info) => (requests++, recorded(req, info)),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/monitoring`,
    port: server.addr.port,
    logs,
    get requests() {
      return requests;
    },
    delivery,
    deliveryLogs,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await delivery.close();
    },
  };
}

/** Parse a DSN the test wrote, throwing if it is not one. */
export function mustParse(dsn: string): Dsn {
  const parsed = parseDsn(dsn);
  if (parsed === null) throw new Error(`bad test DSN ${dsn}`);
  return parsed;
}

/** A shared UTF-8 encoder. */
export const encoder = new TextEncoder();

/** `length` random (incompressible) bytes. */
export function randomBytes(length: number): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i += 65536) crypto.getRandomValues(bytes.subarray(i, i + 65536));
  return bytes;
}

/** The bytes of `parts`, one after another. */
export function concat(parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

/** A valid envelope: header naming `dsn`, one attachment item holding `payload` (binary). */
export function buildEnvelope(dsn: string, payload: Uint8Array): Uint8Array<ArrayBuffer> {
  const header = { event_id: crypto.randomUUID().replaceAll("-", ""), dsn, sent_at: "now" };
  const item = { type: "attachment", length: payload.byteLength, filename: "blob.bin" };
  return concat([
    encoder.encode(`${JSON.stringify(header)}\n${JSON.stringify(item)}\n`),
    payload,
  ]);
}

/** Serve `bytes` as a request body stream in chunks of random sizes up to `maxChunk`. */
export function chunkedStream(bytes: Uint8Array, maxChunk = 64 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      const size = 1 + Math.floor(Math.random() * maxChunk);
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

/** The status, headers and text of a response. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
}

/** POST `body` to `url` (streams go half duplex) and read the whole answer. */
export async function post(url: string, body: BodyInit | null, headers: HeadersInit = {}) {
  const init = { method: "POST", body, headers, duplex: "half" } as RequestInit;
  const response = await fetch(url, init);
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Assert a plain-text answer of `status` whose body is one line, matching `reason` if given. */
export function assertOneLineReason(answer: Answer, status: number, reason?: RegExp) {
  assert.equal(answer.status, status, answer.text);
  assert.match(answer.headers.get("content-type") ?? "", /^text\/plain/);
  assert.match(answer.text, /^[^\n]+\n$/);
  if (reason) assert.match(answer.text, reason);
}

/** Compress `bytes` with CompressionStream (gzip unless `format` says otherwise). */
export async function gzip(bytes: Uint8Array<ArrayBuffer>, format: CompressionFormat = "gzip") {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream(format));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Poll until `check` holds (for effects that land after the response, like a log line). */
export async function eventually(check: () => boolean, what: string, timeoutMs = 5_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/**
 * Send raw bytes over a TCP connection and read one HTTP/1.1 response, without ever sending
 * more than `parts`: proves the server answers without waiting for the rest of a body.
 */
export async function rawExchange(port: number, parts: Uint8Array[]): Promise<{ status: number }> {
  const outcome = await exchangeRaw(port, parts, 5_000);
  if (outcome.kind !== "response") {
    throw new Error(`no HTTP response within 5 s: ${outcome.kind} after ${outcome.received} B`);
  }
  return { status: outcome.status };
}

/** A loopback port nothing listens on (bound, then closed). */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = listener.addr.port;
  listener.close();
  return port;
}
