/**
 * `POST /monitoring`: the Sentry tunnel. The browser SDK posts envelopes here (so ad blockers
 * don't drop them) and the server forwards the raw bytes to the ingest of an allowed DSN.
 *
 * This is a security boundary: the body is hostile until its header line names a configured
 * DSN, the upstream URL is built from that configured DSN (never from the client's string), and
 * only a few upstream response headers come back to the app's origin.
 */
import { brotliHeaderLine } from "./brotli_head.ts";
import { type Dsn, findAllowedDsn, ingestUrl } from "./dsn.ts";
import { findHeaderEnd, MAX_HEADER_BYTES, parseEnvelopeHeader, takeBytes } from "./envelope.ts";

/** What the tunnel needs to know; the router builds it from the app's `Config`. */
export interface TunnelOptions {
  /** DSNs envelopes may be forwarded for; empty disables the tunnel (503). */
  readonly allowedDsns: readonly Dsn[];
  /** Largest request body, counted on the wire (compressed if the client compressed it). */
  readonly maxBodyBytes: number;
  /** Deadline for the whole exchange: reading the body and the ingest's answer. */
  readonly timeoutMs: number;
  /** Take the client address from X-Forwarded-For instead of the socket. */
  readonly trustProxy: boolean;
  /** Upstream fetch; tests and wrappers may pass their own. */
  readonly fetch?: typeof fetch;
  /** Receives one record per rejected or failed envelope. */
  readonly log?: (fields: Record<string, unknown>) => void;
}

/** A request handler as `Deno.serve` calls it. */
export type TunnelHandler = (req: Request, info: Deno.ServeHandlerInfo) => Promise<Response>;

/** Body bytes as the Fetch API hands them out. */
type Bytes = Uint8Array<ArrayBuffer>;

const ENVELOPE_CONTENT_TYPE = "application/x-sentry-envelope";
// Everything else the ingest answers (Set-Cookie, HSTS, CORS...) must not reach the app's origin.
const RELAYED_RESPONSE_HEADERS = ["content-type", "retry-after", "x-sentry-rate-limits"];
// Bodies up to this size are collected whole so the ingest gets a Content-Length and one write;
// larger ones stream so memory stays flat.
const SMALL_BODY_BYTES = 64 * 1024;
// The ingest answers `{"id":"..."}`; anything bigger is not a Sentry ingest.
const MAX_UPSTREAM_RESPONSE_BYTES = 64 * 1024;
// A compressed header line of 64 KiB is at most a little over 64 KiB on the wire; this bound
// stops bodies of empty deflate blocks that never produce a line.
const MAX_ENCODED_HEADER_BYTES = 256 * 1024;
// Compressed input goes to the decoder in slices: deflate expands at most ~1032:1, so one slice
// yields at most ~1 MiB however hostile the body.
const DECODER_SLICE_BYTES = 1024;
// Brotli goes through node:zlib instead of DecompressionStream: a few brotli bytes can expand
// into one 16 MiB chunk there, while brotli_head.ts caps the decoded size (see that file).
const DECODERS: Record<string, HeadFormat> = {
  "gzip": "gzip",
  "x-gzip": "gzip",
  "deflate": "deflate",
  "br": "br",
};

/** How the header line of an encoded body is decoded. */
type HeadFormat = CompressionFormat | "br";

type StopCause = "timeout" | "client" | "too-large" | "abandoned";

/** A 4xx/5xx the tunnel answers itself, with a one-line reason. */
interface Rejection {
  readonly status: number;
  readonly reason: string;
  readonly headers?: HeadersInit;
}

/** The part of a stream reader the tunnel uses, so a whole small body can stand in for one. */
type BodyReader = Pick<ReadableStreamDefaultReader<Bytes>, "read" | "cancel">;

/** One request's body transfer; `cause` is set once when it is cut short. */
interface Transfer {
  readonly reader: BodyReader;
  readonly upstream: AbortController;
  readonly declaredBytes: number | null;
  readonly maxBytes: number;
  received: number;
  done: boolean;
  /** An upstream request was started... */
  forwarding: boolean;
  /** ...and its answer has been read to the end. */
  answered: boolean;
  cause: StopCause | undefined;
}

/** The envelope header line was read; `chunks` are every body byte read so far. */
interface Head {
  readonly line: Bytes;
  readonly chunks: Bytes[];
}

/** Thrown inside a transfer once it was stopped; the handler maps `Transfer.cause` to a status. */
class TransferStopped extends Error {}

const HEADER_MISSING: Rejection = {
  status: 400,
  reason: "envelope header line too long or missing",
};

/**
 * Build the tunnel handler.
 *
 * @example
 * const tunnel = createTunnelHandler({
 *   allowedDsns: config.tunnelAllowedDsns,
 *   maxBodyBytes: config.tunnelMaxBodyBytes,
 *   timeoutMs: config.tunnelTimeoutMs,
 *   trustProxy: config.trustProxy,
 * });
 * Deno.serve((req, info) => tunnel(req, info));
 */
export function createTunnelHandler(options: TunnelOptions): TunnelHandler {
  const upstreamFetch = options.fetch ?? fetch;
  const log = options.log ?? logJsonLine;
  const deadlines = createDeadlines(options.timeoutMs, (t) => stop(t, "timeout"));

  function reject(rejection: Rejection, bytes: number): Response {
    log({ msg: "tunnel", reason: rejection.reason, status: rejection.status, bytes });
    return textResponse(rejection);
  }

  async function forward(
    req: Request,
    info: Deno.ServeHandlerInfo,
    t: Transfer,
    format: HeadFormat | null,
  ): Promise<Response | Rejection> {
    const head = format === null ? await readPlainHead(t) : await readEncodedHead(t, format);
    if ("status" in head) return head;
    const header = parseEnvelopeHeader(head.line);
    if (!header.ok) return { status: 400, reason: header.reason };
    const dsn = findAllowedDsn(header.dsn, options.allowedDsns);
    if (dsn === undefined) return { status: 403, reason: "envelope DSN is not allowed here" };
    const body = await collectSmallBody(t, head.chunks);
    t.forwarding = true;
    const upstream = await upstreamFetch(ingestUrl(dsn, "envelope"), {
      method: "POST",
      headers: upstreamHeaders(req, info, options.trustProxy),
      body,
      redirect: "manual",
      signal: t.upstream.signal,
      duplex: "half",
    } as RequestInit);
    const outcome = await relayResponse(upstream);
    t.answered = true;
    return outcome;
  }

  return async function tunnelEnvelope(req, info) {
    const declaredBytes = contentLength(req.headers);
    const format = decoderFormat(req.headers.get("content-encoding"));
    const early = precheck(req, options, declaredBytes, format);
    if (early !== undefined || format === "unsupported" || req.body === null) {
      // Not reading the body at all is the point (an oversized upload is refused unread).
      req.body?.cancel().catch(ignore);
      return reject(early ?? HEADER_MISSING, declaredBytes ?? 0);
    }
    const t: Transfer = {
      reader: bodyReader(req, declaredBytes),
      upstream: new AbortController(),
      declaredBytes,
      maxBytes: options.maxBodyBytes,
      received: 0,
      done: false,
      forwarding: false,
      answered: false,
      cause: undefined,
    };
    deadlines.add(t);
    try {
      const outcome = await forward(req, info, t, format);
      if (!(outcome instanceof Response)) return reject(outcome, t.declaredBytes ?? t.received);
      if (!outcome.ok) {
        const bytes = t.declaredBytes ?? t.received;
        log({
          msg: "tunnel",
          reason: "ingest refused the envelope",
          status: outcome.status,
          bytes,
        });
      }
      return outcome;
    } catch {
      return reject(failure(t, options.timeoutMs), t.declaredBytes ?? t.received);
    } finally {
      deadlines.delete(t);
      // The exchange is over. A read still pending (the ingest answered before taking the
      // whole body) must not end cleanly, or a truncated chunked body would be closed upstream
      // as if complete.
      if (!t.done) t.cause ??= "abandoned";
      // An upstream request still open is no longer wanted. Aborting only then matters: every
      // abort builds a DOMException with a stack trace, too dear for each success.
      if (t.forwarding && !t.answered) t.upstream.abort();
      // Release the body even when Content-Length said it was complete (its stream was never
      // read to the end, and Deno keeps it open until then), and whatever the client has not
      // sent (refused, or the ingest answered early). A no-op when all was read.
      t.reader.cancel().catch(ignore);
    }
  };

  async function relayResponse(upstream: Response): Promise<Response | Rejection> {
    if (upstream.type === "opaqueredirect" || (upstream.status >= 300 && upstream.status < 400)) {
      await upstream.body?.cancel();
      return { status: 502, reason: "ingest answered with a redirect" };
    }
    const body = await readSmallBody(upstream, MAX_UPSTREAM_RESPONSE_BYTES);
    if (body === undefined) return { status: 502, reason: "ingest response too large" };
    const headers = new Headers();
    for (const name of RELAYED_RESPONSE_HEADERS) {
      const value = upstream.headers.get(name);
      if (value !== null) headers.set(name, value);
    }
    const nullBody = upstream.status === 204 || upstream.status === 205;
    return new Response(nullBody ? null : body, { status: upstream.status, headers });
  }
}

/** Rejections decided from the request line and headers alone, before any body byte is read. */
function precheck(
  req: Request,
  options: TunnelOptions,
  declaredBytes: number | null,
  format: HeadFormat | null | "unsupported",
): Rejection | undefined {
  if (req.method !== "POST") {
    return { status: 405, reason: "method not allowed; use POST", headers: { allow: "POST" } };
  }
  if (options.allowedDsns.length === 0) {
    return { status: 503, reason: "tunnel disabled: no Sentry DSN configured" };
  }
  if (format === "unsupported") {
    return { status: 415, reason: "unsupported Content-Encoding; use gzip, deflate or br" };
  }
  if (declaredBytes !== null && declaredBytes > options.maxBodyBytes) {
    return { status: 413, reason: `envelope larger than ${options.maxBodyBytes} bytes` };
  }
  return undefined;
}

/** Map how a transfer ended early (or the upstream fetch failed) to the client's answer. */
function failure(t: Transfer, timeoutMs: number): Rejection {
  switch (t.cause) {
    case "too-large":
      return { status: 413, reason: `envelope larger than ${t.maxBytes} bytes` };
    case "client":
      // Nobody reads this answer; the status only labels the log line.
      return { status: 400, reason: "client closed the connection before the body was complete" };
    case "timeout":
      return t.forwarding && t.done
        ? { status: 504, reason: `ingest did not answer within ${timeoutMs} ms` }
        : { status: 408, reason: `envelope body not received within ${timeoutMs} ms` };
    default:
      // Nothing stopped the transfer, so the upstream fetch itself failed.
      return { status: 502, reason: "ingest unreachable" };
  }
}

/** The transfers in flight, each stopped once its deadline passes. */
interface Deadlines {
  add(t: Transfer): void;
  delete(t: Transfer): void;
}

/**
 * Every transfer gets the same timeout, so deadlines pass in the order transfers started: one
 * timer armed for the oldest does the work of a setTimeout/clearTimeout pair per envelope. That
 * pair costs about 3 µs in Deno 2.9, a tenth of the tunnel's own work on a small envelope.
 */
function createDeadlines(timeoutMs: number, expire: (t: Transfer) => void): Deadlines {
  // Insertion order is deadline order.
  const pending = new Map<Transfer, number>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (ms: number) => timer = setTimeout(fire, Math.ceil(ms));
  function fire() {
    timer = undefined;
    const now = performance.now();
    for (const [t, deadline] of pending) {
      if (deadline > now) {
        arm(deadline - now);
        return;
      }
      pending.delete(t);
      expire(t);
    }
  }
  return {
    add(t) {
      pending.set(t, performance.now() + timeoutMs);
      if (timer === undefined) arm(timeoutMs);
    },
    delete(t) {
      pending.delete(t);
      // No timer outlives the last transfer: an idle tunnel holds no timers.
      if (pending.size === 0 && timer !== undefined) {
        clearTimeout(timer);
        timer = undefined;
      }
    },
  };
}

/** Cut a transfer short: abort the upstream request and stop reading the client's body. */
function stop(t: Transfer, cause: StopCause): void {
  t.cause ??= cause;
  t.upstream.abort();
  t.reader.cancel().catch(ignore);
}

/**
 * The request body's reader. A small body with a Content-Length (what the browser SDK sends)
 * is read in one go: one op and no 64 KiB read buffer per request, and the cap is already
 * known to hold.
 */
function bodyReader(req: Request, declaredBytes: number | null): BodyReader {
  if (declaredBytes !== null && declaredBytes <= SMALL_BODY_BYTES) {
    return wholeBodyReader(req.arrayBuffer());
  }
  return req.body!.getReader();
}

/** A reader that yields `body` as a single chunk; cancel() ends a read still waiting for it. */
function wholeBodyReader(body: Promise<ArrayBuffer>): BodyReader {
  const cancelled = Promise.withResolvers<undefined>();
  let taken = false;
  // Once cancelled nobody awaits the body; its late failure (the client leaving) is expected.
  body.catch(ignore);
  return {
    async read() {
      if (taken) return { done: true, value: undefined };
      taken = true;
      const buffer = await Promise.race([body, cancelled.promise]);
      return buffer === undefined
        ? { done: true, value: undefined }
        : { done: false, value: new Uint8Array(buffer) };
    },
    cancel() {
      cancelled.resolve(undefined);
      return Promise.resolve();
    },
  };
}

/** The next body chunk, or undefined at the end; throws once the transfer is stopped. */
async function readChunk(t: Transfer): Promise<Bytes | undefined> {
  let result: ReadableStreamReadResult<Bytes>;
  try {
    result = await t.reader.read();
  } catch (error) {
    // A body that errors is a client that went away mid-upload.
    stop(t, "client");
    throw error;
  }
  if (t.cause !== undefined) throw new TransferStopped();
  if (result.done) {
    if (t.declaredBytes !== null && t.received !== t.declaredBytes) {
      stop(t, "client");
      throw new TransferStopped();
    }
    t.done = true;
    return undefined;
  }
  t.received += result.value.byteLength;
  if (t.received > t.maxBytes) {
    stop(t, "too-large");
    throw new TransferStopped();
  }
  if (t.declaredBytes !== null && t.received === t.declaredBytes) t.done = true;
  return result.value;
}

/** Read until the envelope header line is complete, scanning each chunk once as it comes. */
async function readPlainHead(t: Transfer): Promise<Head | Rejection> {
  const chunks: Bytes[] = [];
  for (;;) {
    const seen = t.received;
    const chunk = await readChunk(t);
    if (chunk === undefined) return HEADER_MISSING;
    chunks.push(chunk);
    const end = findHeaderEnd(chunk, seen);
    if (end.kind === "found") return { line: takeBytes(chunks, end.offset), chunks };
    if (end.kind === "too-long") return HEADER_MISSING;
  }
}

/**
 * Decompress only as much of the body as it takes to see the header line; the raw chunks are
 * kept so the original compressed bytes are what gets forwarded.
 */
async function readEncodedHead(t: Transfer, format: HeadFormat): Promise<Head | Rejection> {
  const chunks: Bytes[] = [];
  const decoder = createLineDecoder(format);
  let line: Bytes | Rejection | undefined;
  decoder.line.then((value) => {
    line = value;
  });
  try {
    for (;;) {
      const seen = t.received;
      const chunk = await readChunk(t);
      if (chunk !== undefined) {
        chunks.push(chunk);
        const room = MAX_ENCODED_HEADER_BYTES - seen;
        if (room > 0) await Promise.race([decoder.push(chunk.subarray(0, room)), decoder.line]);
      }
      if (line === undefined && (chunk === undefined || t.received >= MAX_ENCODED_HEADER_BYTES)) {
        // No more input for the decoder: whatever it still holds decides.
        decoder.end();
        line = await decoder.line;
      }
      if (line !== undefined) return "status" in line ? line : { line, chunks };
    }
  } finally {
    decoder.dispose();
  }
}

/** A DecompressionStream fed by hand that resolves `line` with the first decoded line. */
interface LineDecoder {
  readonly line: Promise<Bytes | Rejection>;
  /** Feed compressed bytes; never rejects (decoder errors surface through `line`). */
  push(chunk: Bytes): Promise<void>;
  end(): void;
  dispose(): void;
}

function createLineDecoder(format: HeadFormat): LineDecoder {
  if (format === "br") return createBrotliLineDecoder();
  const stream = new DecompressionStream(format);
  const writer = stream.writable.getWriter();
  const reader = stream.readable.getReader();
  return {
    line: readDecodedLine(reader),
    async push(chunk) {
      try {
        for (let i = 0; i < chunk.byteLength; i += DECODER_SLICE_BYTES) {
          await writer.write(chunk.subarray(i, i + DECODER_SLICE_BYTES));
        }
      } catch {
        // The decoder failed or was disposed; `line` already says why.
      }
    },
    end: () => void writer.close().catch(ignore),
    dispose() {
      reader.cancel().catch(ignore);
      writer.abort().catch(ignore);
    },
  };
}

/** The brotli counterpart of a DecompressionStream decoder, with the same contract. */
function createBrotliLineDecoder(): LineDecoder {
  const parts: Bytes[] = [];
  let size = 0;
  let settle!: (value: Bytes | Rejection) => void;
  const line = new Promise<Bytes | Rejection>((resolve) => settle = resolve);
  let settled = false;
  const decide = (ended: boolean) => {
    if (settled) return;
    const head = brotliHeaderLine(takeBytes(parts, size), MAX_HEADER_BYTES);
    if (head === "more" && !ended) return;
    settled = true;
    if (head === "corrupt") {
      settle({ status: 400, reason: "envelope body could not be decompressed" });
    } else if (typeof head === "string") settle(HEADER_MISSING);
    else settle(head.line);
  };
  return {
    line,
    push(chunk) {
      parts.push(chunk);
      size += chunk.byteLength;
      decide(false);
      return Promise.resolve();
    },
    end: () => decide(true),
    dispose() {
      settled = true;
      settle(HEADER_MISSING);
    },
  };
}

async function readDecodedLine(
  reader: ReadableStreamDefaultReader<Bytes>,
): Promise<Bytes | Rejection> {
  const chunks: Bytes[] = [];
  let seen = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return HEADER_MISSING;
      chunks.push(value);
      const end = findHeaderEnd(value, seen);
      seen += value.byteLength;
      if (end.kind === "found") return takeBytes(chunks, end.offset);
      if (end.kind === "too-long") return HEADER_MISSING;
    }
  } catch {
    return { status: 400, reason: "envelope body could not be decompressed" };
  }
}

/**
 * The body to send upstream: one array when it is small and has fully arrived (the common
 * case, sent with a Content-Length), else a stream that replays what was read and then pulls the
 * rest on demand, so a large body never sits in memory whole.
 */
async function collectSmallBody(
  t: Transfer,
  chunks: Bytes[],
): Promise<Bytes | ReadableStream<Bytes>> {
  const expectSmall = (t.declaredBytes ?? 0) <= SMALL_BODY_BYTES;
  while (!t.done && expectSmall && t.received <= SMALL_BODY_BYTES) {
    const chunk = await readChunk(t);
    if (chunk !== undefined) chunks.push(chunk);
  }
  if (t.done) return takeBytes(chunks, t.received);
  return replayThenStream(t, chunks.length > 1 ? [takeBytes(chunks, t.received)] : chunks);
}

function replayThenStream(t: Transfer, chunks: Bytes[]): ReadableStream<Bytes> {
  return new ReadableStream<Bytes>({
    async pull(controller) {
      const chunk = chunks.shift() ?? await readChunk(t);
      if (chunk === undefined) controller.close();
      else controller.enqueue(chunk);
    },
    cancel() {
      // The ingest stopped reading (it answered early): don't keep reading the client.
      t.reader.cancel().catch(ignore);
    },
  }, { highWaterMark: 0 });
}

/** Read a response body of at most `maxBytes`; undefined (and the rest cancelled) if larger. */
async function readSmallBody(response: Response, maxBytes: number): Promise<Bytes | undefined> {
  if (response.body === null) return new Uint8Array();
  // A declared length bounds the body, unless fetch is decompressing it on the way in.
  const declared = contentLength(response.headers);
  if (declared !== null && declared <= maxBytes && !response.headers.has("content-encoding")) {
    return new Uint8Array(await response.arrayBuffer());
  }
  const reader = response.body.getReader();
  const chunks: Bytes[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return takeBytes(chunks, total);
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
}

// A plain record rather than a Headers object: fetch copies and validates either way, and the
// record skips building one more Headers per envelope.
function upstreamHeaders(req: Request, info: Deno.ServeHandlerInfo, trustProxy: boolean) {
  const headers: Record<string, string> = { "content-type": ENVELOPE_CONTENT_TYPE };
  const encoding = req.headers.get("content-encoding");
  if (encoding !== null) headers["content-encoding"] = encoding;
  const clientIp = clientAddress(req.headers, info.remoteAddr, trustProxy);
  if (clientIp !== undefined) headers["x-sentry-forwarded-for"] = clientIp;
  const userAgent = req.headers.get("user-agent");
  if (userAgent !== null) headers["user-agent"] = userAgent;
  return headers;
}

// Only something shaped like an IPv4/IPv6 address is passed on; Sentry uses it for geo-IP and
// rate limits, so a free-form header value must not be able to pose as one.
const IP_ADDRESS = /^[0-9A-Fa-f:.]{2,45}$/;

/** The browser's address: the socket peer, or the first X-Forwarded-For hop behind a proxy. */
function clientAddress(headers: Headers, addr: Deno.Addr, trustProxy: boolean) {
  if (trustProxy) {
    const first = headers.get("x-forwarded-for")?.split(",")[0]?.trim();
    if (first !== undefined && IP_ADDRESS.test(first)) return first;
  }
  return "hostname" in addr ? addr.hostname : undefined;
}

function decoderFormat(encoding: string | null): HeadFormat | null | "unsupported" {
  const name = encoding?.trim().toLowerCase() ?? "";
  if (name === "" || name === "identity") return null;
  return Object.hasOwn(DECODERS, name) ? DECODERS[name] : "unsupported";
}

function contentLength(headers: Headers): number | null {
  const value = headers.get("content-length");
  return value !== null && /^\d+$/.test(value) ? Number(value) : null;
}

function textResponse({ status, reason, headers }: Rejection): Response {
  const response = new Response(`${reason}\n`, { status, headers });
  response.headers.set("content-type", "text/plain; charset=utf-8");
  return response;
}

function logJsonLine(fields: Record<string, unknown>): void {
  console.warn(JSON.stringify(fields));
}

function ignore(): void {}
