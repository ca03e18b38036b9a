/**
 * Live reload: `GET /_dev/reload` is a Server-Sent Events stream that says `hello` with the id of
 * the process answering, and `GET /_dev/client.js` the script (client/dev_client.js) that listens
 * to it and reloads the page when that id changes: the server restarted after a save, or the
 * runner's error page took its place (or gave it back).
 */
import { DEV_PATHS } from "../constants.ts";

// Read on every request: the file is in no module graph, so the next page load gets an edit.
const DEV_CLIENT_FILE = new URL("../../client/dev_client.js", import.meta.url);

/**
 * The live-reload routes for one process; `undefined` for any other path. Streams end when
 * `closed` aborts (an open stream would hold a graceful shutdown forever).
 */
export function liveReload(
  session: string,
  closed?: AbortSignal,
): (req: Request) => Response | Promise<Response> | undefined {
  const hello = new TextEncoder().encode(`event: hello\ndata: ${session}\n\n`);
  return (req) => {
    const { pathname } = new URL(req.url);
    if (pathname === DEV_PATHS.client) {
      return Deno.readTextFile(DEV_CLIENT_FILE).then((script) =>
        new Response(script, {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": "no-store",
          },
        })
      );
    }
    if (pathname !== DEV_PATHS.reload) return undefined;
    const body = new ReadableStream<Uint8Array>({
      start(stream) {
        stream.enqueue(hello);
        closed?.addEventListener("abort", () => {
          try {
            stream.close();
          } catch { /* the page left already */ }
        });
      },
    });
    return new Response(body, {
      headers: { "content-type": "text/event-stream", "cache-control": "no-store" },
    });
  };
}
