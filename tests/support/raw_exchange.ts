/**
 * One raw HTTP/1.1 exchange over a TCP socket: write the request bytes exactly as given (in
 * pieces, so the server sees them split), then read just enough of the first final response
 * to judge it. fetch cannot do this: it validates and normalises what it sends.
 *
 * @example
 * const outcome = await exchangeRaw(port, [bytes.subarray(0, 3), bytes.subarray(3)], 2_000);
 * if (outcome.kind === "response") outcome.status;
 */

/** The head of a final (non-1xx) response, and whether its body has at least one byte. */
export interface RawResponse {
  readonly kind: "response";
  readonly status: number;
  /** Header names in lower case; repeated headers are joined with ", ". */
  readonly headers: ReadonlyMap<string, string>;
  /** True when the body is non-empty (by Content-Length, a first chunk, or bytes before EOF). */
  readonly hasBody: boolean;
}

/**
 * What came back: a response; the connection ending (EOF or reset) before a complete response
 * head; or nothing decisive within the time allowed.
 */
export type RawOutcome =
  | RawResponse
  | { readonly kind: "closed"; readonly received: number }
  | { readonly kind: "timeout"; readonly received: number };

/** A response head parsed from the start of a byte stream. */
export interface ParsedHead {
  readonly status: number;
  readonly headers: ReadonlyMap<string, string>;
  /** Offset of the first body byte. */
  readonly bodyStart: number;
}

const CRLFCRLF = [13, 10, 13, 10];
const latin1 = new TextDecoder("latin1");

/**
 * Parse the first final response head in `bytes`, skipping interim 1xx heads (100 Continue).
 * `"incomplete"` when more bytes are needed, `"invalid"` when it is not HTTP/1.x.
 */
export function parseResponseHead(bytes: Uint8Array): ParsedHead | "incomplete" | "invalid" {
  let start = 0;
  for (;;) {
    const end = indexOfSequence(bytes, CRLFCRLF, start);
    if (end === -1) {
      return looksLikeStatusLine(bytes.subarray(start)) ? "incomplete" : "invalid";
    }
    const lines = latin1.decode(bytes.subarray(start, end)).split("\r\n");
    const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(lines[0]);
    if (match === null) return "invalid";
    const status = Number(match[1]);
    start = end + 4;
    if (status < 200) continue;
    const headers = new Map<string, string>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      if (colon <= 0) return "invalid";
      const name = line.slice(0, colon).toLowerCase();
      const value = line.slice(colon + 1).trim();
      const previous = headers.get(name);
      headers.set(name, previous === undefined ? value : `${previous}, ${value}`);
    }
    return { status, headers, bodyStart: start };
  }
}

/**
 * Whether the body is known to be empty or non-empty from what has arrived, or `"more"` if
 * it needs more bytes (`ended`: the connection has ended, so nothing more will come).
 */
export function bodyPresence(
  head: ParsedHead,
  bytes: Uint8Array,
  options: { headRequest: boolean; ended: boolean },
): boolean | "more" {
  const length = head.headers.get("content-length");
  // A HEAD answer has no body; its Content-Length tells what a GET would have carried.
  if (length !== undefined) return /^\d+$/.test(length) ? Number(length) > 0 : true;
  if (options.headRequest || head.status === 204 || head.status === 304) return false;
  const rest = bytes.subarray(head.bodyStart);
  if (/chunked/i.test(head.headers.get("transfer-encoding") ?? "")) {
    const lineEnd = indexOfSequence(rest, [13, 10], 0);
    if (lineEnd === -1) return options.ended ? false : "more";
    const size = parseInt(latin1.decode(rest.subarray(0, lineEnd)).split(";")[0], 16);
    return !(size === 0);
  }
  // Delimited by the end of the connection.
  if (rest.length > 0) return true;
  return options.ended ? false : "more";
}

/**
 * Connect to 127.0.0.1:`port`, write each piece in its own write, and read until the first
 * final response can be judged, the connection ends, or `timeoutMs` passes.
 */
export async function exchangeRaw(
  port: number,
  pieces: readonly Uint8Array[],
  timeoutMs: number,
  options: { headRequest?: boolean } = {},
): Promise<RawOutcome> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    conn.close();
  }, timeoutMs);
  const writing = writePieces(conn, pieces);
  try {
    return await readOutcome(conn, options.headRequest ?? false, () => timedOut);
  } finally {
    clearTimeout(timer);
    if (!timedOut) conn.close();
    await writing;
  }
}

async function writePieces(conn: Deno.Conn, pieces: readonly Uint8Array[]): Promise<void> {
  try {
    for (const piece of pieces) {
      let offset = 0;
      while (offset < piece.length) offset += await conn.write(piece.subarray(offset));
      // Let the server's read see this piece on its own before the next one arrives.
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
  } catch {
    // The server may answer and close before reading everything (e.g. a 400 or 431): fine.
  }
}

async function readOutcome(
  conn: Deno.Conn,
  headRequest: boolean,
  timedOut: () => boolean,
): Promise<RawOutcome> {
  let bytes: Uint8Array = new Uint8Array(0);
  const buffer = new Uint8Array(16 * 1024);
  for (;;) {
    let n: number | null;
    try {
      n = await conn.read(buffer);
    } catch {
      n = null; // reset, or closed by the timer
    }
    if (n !== null) bytes = concat(bytes, buffer.subarray(0, n));
    const ended = n === null;
    const head = parseResponseHead(bytes);
    if (typeof head === "object") {
      const hasBody = bodyPresence(head, bytes, { headRequest, ended });
      if (hasBody !== "more") {
        return { kind: "response", status: head.status, headers: head.headers, hasBody };
      }
    }
    if (timedOut()) return { kind: "timeout", received: bytes.length };
    if (ended || head === "invalid") return { kind: "closed", received: bytes.length };
  }
}

function looksLikeStatusLine(bytes: Uint8Array): boolean {
  const prefix = latin1.decode(bytes.subarray(0, 9));
  return "HTTP/1.1 ".startsWith(prefix) || "HTTP/1.0 ".startsWith(prefix) ||
    prefix.startsWith("HTTP/1.");
}

function indexOfSequence(bytes: Uint8Array, sequence: readonly number[], from: number): number {
  outer: for (let i = from; i <= bytes.length - sequence.length; i++) {
    for (let j = 0; j < sequence.length; j++) {
      if (bytes[i + j] !== sequence[j]) continue outer;
    }
    return i;
  }
  return -1;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
