/**
 * An ingest on 127.0.0.1 that misbehaves the way real ones and the proxies in front of them do:
 * it closes idle keep-alive connections, holds some answers, and resets other requests halfway
 * through the answer. A raw HTTP/1.1 server on `node:net`, the one API here that can send a TCP
 * reset (`resetAndDestroy`). It reads bodies with a Content-Length only, as the tunnel sends
 * small envelopes. Nothing in it runs on a clock: the test says when idle connections close and
 * when held answers go out.
 *
 * @example
 * await using ingest = await startScriptedIngest({ act: (body) => body.includes("slow") ? "hold" : "answer" });
 * // ... post through a tunnel allowed ingest.dsn ...
 * ingest.release();
 */
import net from "node:net";

/** What the ingest does once a request's body has arrived whole. */
export type Action = "answer" | "hold" | "cut" | "reset";

/** How the ingest behaves; every field is optional. */
export interface IngestScript {
  /**
   * Per request: answer now, hold the answer until {@link ScriptedIngest.release}, send half an
   * answer and reset, or reset without a byte of answer and forget the body (a proxy in front of
   * the ingest that fails).
   */
  readonly act?: (body: string) => Action;
}

/** A running scripted ingest. */
export interface ScriptedIngest extends AsyncDisposable {
  /** A DSN for this ingest: `http://public@127.0.0.1:PORT/1`. */
  readonly dsn: string;
  /** Every body that arrived whole, in arrival order, as latin1 text. */
  readonly bodies: readonly string[];
  /** Answers held and not yet released. */
  readonly held: number;
  /** Requests reset unread because they reached a connection the ingest had closed. */
  readonly resetIdle: number;
  /** Send every held answer whose connection is still open. */
  release(): void;
  /**
   * Close every idle connection (none of its requests unanswered), as an idle timeout does.
   * `"now"`: the close goes out at once. `"as-next-request-arrives"`: it crosses the client's
   * next request on the wire, so that request is reset unread.
   */
  closeIdle(when: "now" | "as-next-request-arrives"): void;
}

const ANSWER = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n" +
  '{"id":"1"}\n';
// A head that promises 100 bytes, and 10 of them.
const HALF_ANSWER =
  "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n" +
  '{"id":"1",';

/** One client connection and what the ingest owes it. */
interface Connection {
  readonly socket: net.Socket;
  /** Bytes of a request not yet whole. */
  buffered: string;
  /** Answers held for it. */
  held: number;
  /** Closed by the ingest: any request that still reaches it is reset unread. */
  closed: boolean;
}

/** Start a scripted ingest on 127.0.0.1 with a free port. */
export async function startScriptedIngest(script: IngestScript = {}): Promise<ScriptedIngest> {
  const bodies: string[] = [];
  const counts = { resetIdle: 0 };
  const connections = new Set<Connection>();
  const held: Connection[] = [];
  const server = net.createServer((socket) => {
    const connection: Connection = { socket, buffered: "", held: 0, closed: false };
    connections.add(connection);
    socket.on("close", () => connections.delete(connection));
    socket.on("error", () => {});
    socket.on("data", (chunk: Uint8Array) => {
      if (connection.closed) {
        counts.resetIdle++;
        return socket.resetAndDestroy();
      }
      connection.buffered += latin1.decode(chunk);
      for (;;) {
        const { buffered } = connection;
        const headEnd = buffered.indexOf("\r\n\r\n");
        if (headEnd < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(buffered.slice(0, headEnd))?.[1] ?? 0);
        if (buffered.length < headEnd + 4 + length) return;
        const body = buffered.slice(headEnd + 4, headEnd + 4 + length);
        connection.buffered = buffered.slice(headEnd + 4 + length);
        const action = script.act?.(body) ?? "answer";
        if (action === "reset") return socket.resetAndDestroy();
        bodies.push(body);
        if (action === "cut") {
          return void socket.write(HALF_ANSWER, () => socket.resetAndDestroy());
        }
        if (action === "hold") {
          connection.held++;
          held.push(connection);
        } else {
          socket.write(ANSWER);
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    dsn: `http://public@127.0.0.1:${port}/1`,
    bodies,
    get held() {
      return held.length;
    },
    get resetIdle() {
      return counts.resetIdle;
    },
    release() {
      for (const connection of held.splice(0)) {
        connection.held--;
        if (!connection.socket.destroyed) connection.socket.write(ANSWER);
      }
    },
    closeIdle(when) {
      for (const connection of connections) {
        if (connection.closed || connection.held > 0 || connection.buffered !== "") continue;
        connection.closed = true;
        if (when === "now") connection.socket.end();
      }
    },
    async [Symbol.asyncDispose]() {
      for (const { socket } of connections) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const latin1 = new TextDecoder("latin1");
