/**
 * An ingest on 127.0.0.1 that misbehaves the way real ones and the proxies in front of them do:
 * it closes idle keep-alive connections, answers some requests late, and resets others halfway
 * through the answer. A raw HTTP/1.1 server on `node:net`, the one API here that can send a TCP
 * reset (`resetAndDestroy`). It reads bodies with a Content-Length only, as the tunnel sends
 * small envelopes.
 *
 * @example
 * await using ingest = await startScriptedIngest({ act: (body) => body.includes("slow") ? "late" : "answer" });
 * // ... post through a tunnel allowed ingest.dsn ...
 * ingest.bodies.length;
 */
import net from "node:net";

/** What the ingest does once a request's body has arrived whole. */
export type Action = "answer" | "late" | "cut" | "reset";

/** How the ingest behaves; every field is optional. */
export interface IngestScript {
  /**
   * Idle keep-alive connections are closed this long after their last answer. A request that
   * reaches one at or after that moment, before the close went out, is reset unread: what a
   * request that crosses the server's close on the wire meets.
   */
  readonly idleMs?: number;
  /** How long a "late" answer waits (default 5 s; closing the ingest cuts it short). */
  readonly lateMs?: number;
  /**
   * Per request: answer now, answer after `lateMs`, send half an answer and reset, or reset
   * without a byte of answer and forget the body (a proxy in front of the ingest that fails).
   */
  readonly act?: (body: string) => Action;
}

/** A running scripted ingest. */
export interface ScriptedIngest extends AsyncDisposable {
  /** A DSN for this ingest: `http://public@127.0.0.1:PORT/1`. */
  readonly dsn: string;
  /** Every body that arrived whole, in arrival order, as latin1 text. */
  readonly bodies: readonly string[];
  /** Requests reset unread because their connection had idled out. */
  readonly resetIdle: number;
}

const ANSWER = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n" +
  '{"id":"1"}\n';
// A head that promises 100 bytes, and 10 of them.
const HALF_ANSWER =
  "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n" +
  '{"id":"1",';

/** Start a scripted ingest on 127.0.0.1 with a free port. */
export async function startScriptedIngest(script: IngestScript = {}): Promise<ScriptedIngest> {
  const bodies: string[] = [];
  const counts = { resetIdle: 0 };
  const sockets = new Set<net.Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
    return timer;
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    let buffered = "";
    let idleSince: number | undefined;
    let idleTimer: ReturnType<typeof setTimeout> | undefined;
    const idle = () => {
      if (script.idleMs === undefined) return;
      idleSince = performance.now();
      idleTimer = later(script.idleMs * 1.5, () => socket.end());
    };
    socket.on("data", (chunk: Uint8Array) => {
      if (idleTimer !== undefined) {
        clearTimeout(idleTimer);
        timers.delete(idleTimer);
        idleTimer = undefined;
      }
      if (idleSince !== undefined && performance.now() - idleSince >= script.idleMs!) {
        counts.resetIdle++;
        return socket.resetAndDestroy();
      }
      idleSince = undefined;
      buffered += latin1.decode(chunk);
      for (;;) {
        const headEnd = buffered.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(buffered.slice(0, headEnd))?.[1] ?? 0);
        if (buffered.length < headEnd + 4 + length) return;
        const body = buffered.slice(headEnd + 4, headEnd + 4 + length);
        buffered = buffered.slice(headEnd + 4 + length);
        const action = script.act?.(body) ?? "answer";
        if (action === "reset") return socket.resetAndDestroy();
        bodies.push(body);
        if (action === "cut") {
          return void socket.write(HALF_ANSWER, () => socket.resetAndDestroy());
        }
        if (action === "late") {
          later(script.lateMs ?? 5_000, () => {
            if (!socket.destroyed) socket.write(ANSWER, idle);
          });
        } else {
          socket.write(ANSWER, idle);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    dsn: `http://public@127.0.0.1:${port}/1`,
    bodies,
    get resetIdle() {
      return counts.resetIdle;
    },
    async [Symbol.asyncDispose]() {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const latin1 = new TextDecoder("latin1");
