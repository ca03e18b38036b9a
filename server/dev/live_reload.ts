/**
 * Live reload: `GET /_dev/reload` streams `hello` with this process's id; `/_dev/client.js` reloads
 * the page when the id changes (a restart, or the error page taking over or giving back).
 */
import { DEV_PATHS } from "../constants.ts";
import { answerText } from "../http/error_pages.ts";

// Read on every request: the file is in no module graph, so the next page load gets an edit.
const DEV_CLIENT_FILE = new URL("../../client/dev_client.js", import.meta.url);

/**
 * The live-reload routes for one process; `undefined` for any other path. Streams end when
 * `closed` aborts (an open stream would hold a graceful shutdown forever).
 */
export function liveReload(session: string, closed?: AbortSignal) {
  const hello = new TextEncoder().encode(`event: hello\ndata: ${session}\n\n`);
  return (req: Request) => {
    const { pathname } = new URL(req.url);
    if (pathname === DEV_PATHS.client) {
      return Deno.readTextFile(DEV_CLIENT_FILE).then((script) =>
        answerText(200, "text/javascript; charset=utf-8", script)
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
