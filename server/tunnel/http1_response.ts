/**
 * A strict, incremental HTTP/1.1 response parser for the tunnel's ingest client: bytes in, one
 * response out. Pure (no I/O), so every framing case is tested without a socket.
 *
 * Strict on purpose: the ingest's answer decides what the browser gets and whether a connection
 * may carry the next envelope, so anything ambiguous (bare LF, obs-fold, conflicting lengths,
 * a transfer coding other than chunked) is an error, never a guess.
 */
import { GrowableBytes } from "./growable_bytes.ts";

/** A complete response. */
export interface ParsedResponse {
  readonly status: number;
  /** Header fields in order, names lower-cased. */
  readonly headers: readonly [string, string][];
  readonly body: Uint8Array<ArrayBuffer>;
  /** The connection may carry another request (HTTP/1.1, no `Connection: close`, nothing left over). */
  readonly reusable: boolean;
  /** HTTP/1.1 without `Connection: close`: the server will read the next request sent. */
  readonly keepAlive: boolean;
  /**
   * The answer said `Connection: close`: the server processes no request sent after this one
   * (RFC 9112, 9.6). A connection that ends otherwise (an HTTP/1.0 answer, a body ended by the
   * close) gives no such promise about the requests behind it.
   */
  readonly closes: boolean;
}

/** What one {@link ResponseParser.push} or {@link ResponseParser.end} made of the bytes so far. */
export type ParseStep =
  | { readonly kind: "more" }
  /** `used`: how many bytes of the last chunk pushed belong to this response (the rest, if any,
   * is the start of the next one on a pipelined connection). */
  | { readonly kind: "done"; readonly response: ParsedResponse; readonly used: number }
  /** The body passed the cap; `response.body` holds the first `maxBodyBytes + 1` bytes. */
  | { readonly kind: "too-large"; readonly response: ParsedResponse }
  | { readonly kind: "error"; readonly reason: string };

const MORE: ParseStep = { kind: "more" };
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Field values: visible ASCII, obs-text, SP and HTAB; no other control bytes.
// deno-lint-ignore no-control-regex
const BAD_VALUE = /[\x00-\x08\x0a-\x1f\x7f]/;
// deno-lint-ignore no-control-regex
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: [^\x00-\x08\x0a-\x1f\x7f]*)?$/;
const MAX_CHUNK_LINE = 1024;
// Interim answers before the real one: an ingest sends 100 Continue or 103 Early Hints, once.
const MAX_INTERIM = 8;

type Phase = "head" | "length" | "chunk-size" | "chunk-data" | "chunk-end" | "trailers" | "close";

interface Head {
  readonly status: number;
  readonly headers: [string, string][];
  readonly keepAlive: boolean;
  readonly closes: boolean;
}

/**
 * Parse one response. Feed it every byte read, then `end()` at EOF. What it keeps it copies, so
 * the caller may read the next bytes into the same buffer.
 *
 * @example
 * const parser = new ResponseParser(16384, 65536);
 * parser.push(new TextEncoder().encode("HTTP/1.1 204 No Content\r\n\r\n")).kind; // "done"
 */
export class ResponseParser {
  #phase: Phase = "head";
  #head: Head | undefined;
  // Made only for a head or body that arrives in pieces: a pipelined batch's answers come many to
  // a read, and two buffers per answer were half the parse (about 5 of 10 µs in a loop).
  #headBytes: GrowableBytes | undefined;
  #body: GrowableBytes | undefined;
  #left = 0;
  #line = "";
  #interim = 0;
  // Bytes of chunk-size lines, chunk ends and trailers so far, held to the head's cap: without
  // it, endless trailers or 1-byte chunks with long extensions would only end at the timeout.
  #framingBytes = 0;
  #finished: ParseStep | undefined;

  constructor(readonly maxHeadBytes: number, readonly maxBodyBytes: number) {}

  /** Take the next bytes read from the connection. */
  push(bytes: Uint8Array): ParseStep {
    if (this.#finished !== undefined) return this.#finished;
    let at = 0;
    while (at < bytes.byteLength) {
      const step = this.#phase === "head" ? this.#pushHead(bytes, at) : this.#pushBody(bytes, at);
      if (typeof step !== "number") return this.#finish(step);
      at = step;
    }
    if (this.#phase === "close" || this.#phase === "length") return this.#checkBody();
    return MORE;
  }

  /** The connection reached EOF. */
  end(): ParseStep {
    if (this.#finished !== undefined) return this.#finished;
    if (this.#phase === "close") return this.#finish(this.#done(false, 0, 0));
    return this.#finish({ kind: "error", reason: "connection closed before the response ended" });
  }

  #finish(step: ParseStep): ParseStep {
    if (step.kind !== "more") this.#finished = step;
    return step;
  }

  // Returns the offset after the bytes used, or a final step. A head read whole is parsed where
  // it lies; one split across reads is copied until it is complete (callers reuse their buffer).
  #pushHead(bytes: Uint8Array, at: number): number | ParseStep {
    const kept = this.#headBytes;
    const before = kept?.length ?? 0;
    kept?.append(bytes.subarray(at), true);
    const all = kept?.bytes() ?? bytes.subarray(at);
    const end = findHeadEnd(all, Math.max(0, before - 3));
    if (hasBareLf(all.subarray(0, end < 0 ? all.byteLength : end + 4), before)) {
      return { kind: "error", reason: "bare LF in response head" };
    }
    if (end < 0) {
      // Up to 3 bytes past the cap may be the start of the terminator, which the cap does not
      // count: the same head passes or fails however the reads split it.
      if (all.byteLength > this.maxHeadBytes + 3) {
        return { kind: "error", reason: "response head too large" };
      }
      if (kept === undefined) (this.#headBytes = new GrowableBytes()).append(all, true);
      return MORE;
    }
    if (end > this.maxHeadBytes) return { kind: "error", reason: "response head too large" };
    const head = parseHead(all.subarray(0, end));
    if (typeof head === "string") return { kind: "error", reason: head };
    const used = at + (end + 4 - before);
    this.#headBytes = undefined;
    // An interim answer (100 Continue, 103 Early Hints): the real one follows.
    if (head.status < 200) {
      if (head.status === 101) return { kind: "error", reason: "101" };
      if (++this.#interim > MAX_INTERIM) return { kind: "error", reason: "too many 1xx answers" };
      return used;
    }
    const framing = bodyFraming(head);
    if (typeof framing === "object") return { kind: "error", reason: framing.error };
    this.#head = head;
    if (framing === "none") return this.#done(head.keepAlive, used, bytes.byteLength);
    if (framing === "chunked") this.#phase = "chunk-size";
    else if (framing === "close") this.#phase = "close";
    else {
      this.#phase = "length";
      this.#left = framing;
      if (framing > this.maxBodyBytes) this.#left = this.maxBodyBytes + 1;
      if (this.#left === 0) return this.#done(head.keepAlive, used, bytes.byteLength);
    }
    return used;
  }

  #pushBody(bytes: Uint8Array, at: number): number | ParseStep {
    switch (this.#phase) {
      case "close": {
        const body = this.#keptBody();
        body.append(bytes.subarray(at, at + this.maxBodyBytes + 1 - body.length), true);
        return body.length > this.maxBodyBytes ? this.#tooLarge() : bytes.byteLength;
      }
      case "length": {
        const take = Math.min(this.#left, bytes.byteLength - at);
        const body = this.#keptBody();
        body.append(bytes.subarray(at, at + take), true);
        this.#left -= take;
        if (body.length > this.maxBodyBytes) return this.#tooLarge();
        if (this.#left > 0) return at + take;
        return this.#done(this.#head!.keepAlive, at + take, bytes.byteLength);
      }
      case "chunk-data": {
        const take = Math.min(this.#left, bytes.byteLength - at);
        const body = this.#keptBody();
        body.append(bytes.subarray(at, at + take), true);
        this.#left -= take;
        if (body.length > this.maxBodyBytes) return this.#tooLarge();
        if (this.#left === 0) this.#phase = "chunk-end";
        return at + take;
      }
      default:
        return this.#pushLine(bytes, at);
    }
  }

  // Chunk sizes, the CRLF after each chunk, and trailers: one line at a time.
  #pushLine(bytes: Uint8Array, at: number): number | ParseStep {
    const lf = bytes.indexOf(10, at);
    const stop = lf < 0 ? bytes.byteLength : lf + 1;
    for (let i = at; i < stop; i++) this.#line += String.fromCharCode(bytes[i]);
    if (this.#line.length > MAX_CHUNK_LINE) return { kind: "error", reason: "chunk line too long" };
    this.#framingBytes += stop - at;
    if (this.#framingBytes > this.maxHeadBytes) {
      return { kind: "error", reason: "chunk framing and trailers too large" };
    }
    if (lf < 0) return stop;
    if (!this.#line.endsWith("\r\n")) return { kind: "error", reason: "bare LF in chunked body" };
    const line = this.#line.slice(0, -2);
    this.#line = "";
    if (this.#phase === "chunk-end") {
      if (line !== "") return { kind: "error", reason: "chunk not followed by CRLF" };
      this.#phase = "chunk-size";
      return stop;
    }
    if (this.#phase === "trailers") {
      if (line !== "") return stop;
      return this.#done(this.#head!.keepAlive, stop, bytes.byteLength);
    }
    const size = /^([0-9A-Fa-f]{1,8})(?:[ \t]*;[^\r\n]*)?$/.exec(line);
    if (size === null) return { kind: "error", reason: "malformed chunk size" };
    this.#left = parseInt(size[1], 16);
    this.#phase = this.#left === 0 ? "trailers" : "chunk-data";
    return stop;
  }

  #keptBody(): GrowableBytes {
    return this.#body ??= new GrowableBytes();
  }

  #checkBody(): ParseStep {
    return (this.#body?.length ?? 0) > this.maxBodyBytes ? this.#tooLarge() : MORE;
  }

  #tooLarge(): ParseStep {
    const body = this.#keptBody().bytes().slice(0, this.maxBodyBytes + 1);
    const head = this.#head!;
    return { kind: "too-large", response: { ...head, body, reusable: false, keepAlive: false } };
  }

  // `used` of the last chunk's `length` bytes belong to this response.
  #done(keepAlive: boolean, used: number, length: number): ParseStep {
    const head = this.#head!;
    const { status, headers, closes } = head;
    const body = this.#keptBody().bytes();
    const reusable = keepAlive && used === length;
    return { kind: "done", response: { status, headers, body, reusable, keepAlive, closes }, used };
  }
}

function hasBareLf(bytes: Uint8Array, from: number): boolean {
  for (let i = bytes.indexOf(10, from); i >= 0; i = bytes.indexOf(10, i + 1)) {
    if (i === 0 || bytes[i - 1] !== 13) return true;
  }
  return false;
}

function findHeadEnd(bytes: Uint8Array, from: number): number {
  for (
    let i = bytes.indexOf(13, from);
    i >= 0 && i + 3 < bytes.byteLength;
    i = bytes.indexOf(13, i + 1)
  ) {
    if (bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) return i;
  }
  return -1;
}

function parseHead(bytes: Uint8Array): Head | string {
  const text = latin1(bytes);
  const lines = text.split("\r\n");
  const statusLine = STATUS_LINE.exec(lines[0]);
  if (statusLine === null) return "malformed status line";
  const headers: [string, string][] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i];
    const colon = line.indexOf(":");
    if (colon <= 0) return "malformed header line";
    const name = line.slice(0, colon);
    if (!TOKEN.test(name)) return "malformed header name";
    const value = withoutOws(line, colon + 1);
    if (BAD_VALUE.test(value) || line.includes("\n")) return "malformed header value";
    headers.push([name.toLowerCase(), value]);
  }
  // HTTP/1.1 keeps the connection unless told `close`; HTTP/1.0 only when told `keep-alive`
  // (RFC 9112, 9.3). Taking an HTTP/1.0 keep-alive answer for a close would class the rest of a
  // batch as never read and send it again.
  const http11 = statusLine[1] === "1";
  const connection = headerValue(headers, "connection") ?? "";
  const closes = hasToken(connection, "close");
  const keepAlive = !closes && (http11 || hasToken(connection, "keep-alive"));
  return { status: Number(statusLine[2]), headers, keepAlive, closes };
}

// Each byte one char (Latin-1), so a byte check is a char check. TextDecoder("latin1") is
// windows-1252, which maps 0x80-0x9f to other characters; an ASCII head, as ingests send,
// reads the same as UTF-8 in one native call (0.5 µs for a 340-byte head, 2.2 with apply).
function latin1(bytes: Uint8Array): string {
  for (let i = 0; i < bytes.byteLength; i++) if (bytes[i] > 0x7f) return latin1Slow(bytes);
  return ascii.decode(bytes);
}

const ascii = new TextDecoder();

// `apply` over the bytes, not a spread: spreading iterates the array (about 20 µs for a 450-byte
// head, 2 µs with apply). In slices, to stay well under the engine's limit on arguments.
function latin1Slow(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.byteLength; i += 4096) {
    text += String.fromCharCode.apply(null, bytes.subarray(i, i + 4096) as unknown as number[]);
  }
  return text;
}

// Whether a comma-separated list holds `token`, in any letter case.
function hasToken(list: string, token: string): boolean {
  for (const item of list.split(",")) if (item.trim().toLowerCase() === token) return true;
  return false;
}

// The field value without the spaces and tabs around it (RFC 9110, 5.5), and nothing else:
// `trim()` also drops CR, VT, FF and NBSP, so `A: b\r` (a bare CR) would pass as `b`.
function withoutOws(line: string, from: number): string {
  let start = from;
  let end = line.length;
  while (start < end && isOws(line.charCodeAt(start))) start++;
  while (end > start && isOws(line.charCodeAt(end - 1))) end--;
  return line.slice(start, end);
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}

type Framing = number | "chunked" | "close" | "none" | { readonly error: string };

/** How the body is delimited: a length, chunked, until close, or no body at all. */
function bodyFraming(head: Head): Framing {
  if (head.status > 599) return { error: "status out of range" };
  let length: string | undefined;
  let chunked = false;
  for (const [name, value] of head.headers) {
    if (name === "content-length") {
      if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== value)) {
        return { error: "malformed Content-Length" };
      }
      length = value;
    } else if (name === "transfer-encoding") {
      if (chunked || value.toLowerCase() !== "chunked") {
        return { error: "unsupported Transfer-Encoding" };
      }
      chunked = true;
    }
  }
  // A 204 has no body (RFC 9110, 15.3.5): one that declares a length or a coding would leave
  // bytes that read as the next answer.
  if (head.status === 204 && (chunked || (length !== undefined && Number(length) !== 0))) {
    return { error: "a 204 answer that declares a body" };
  }
  if (head.status === 204 || head.status === 304) return "none";
  if (chunked && length !== undefined) {
    return { error: "both Content-Length and Transfer-Encoding" };
  }
  if (chunked) return "chunked";
  if (length !== undefined) return Number(length);
  return "close";
}

/**
 * A header of a parsed answer as `Headers.get` reads it: null when absent, repeated fields
 * joined with ", ". `name` is lower-case, as the parser stores names.
 *
 * @example
 * headerValue([["retry-after", "5"]], "retry-after"); // "5"
 */
export function headerValue(
  headers: readonly (readonly [string, string])[],
  name: string,
): string | null {
  let value: string | null = null;
  for (const [n, v] of headers) if (n === name) value = value === null ? v : `${value}, ${v}`;
  return value;
}

/** The parsed answer as a `Response`, as `fetch` would give it. */
export function toResponse(parsed: ParsedResponse): Response {
  const headers = new Headers();
  for (const [name, value] of parsed.headers) {
    // We asked for no coding and this client decodes none: a coded body cannot be relayed.
    if (name === "content-encoding" && value.toLowerCase() !== "identity") {
      throw new TypeError("ingest answered with an encoded body");
    }
    headers.append(name, value);
  }
  const nullBody = parsed.status === 204 || parsed.status === 205 || parsed.status === 304;
  return new Response(nullBody ? null : parsed.body, { status: parsed.status, headers });
}
