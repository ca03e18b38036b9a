/**
 * `GET /_dev/client.js`: the dev client script, served as it is from client/dev_client.js by
 * the dev server and by the runner's error page alike.
 */

// Read on every request: the file is not in the server's module graph, so editing it restarts
// nothing, and the next page load gets the new version.
const DEV_CLIENT_FILE = new URL("../../client/dev_client.js", import.meta.url);

/** The dev client script's response. */
export async function serveDevClient(): Promise<Response> {
  return new Response(await Deno.readTextFile(DEV_CLIENT_FILE), {
    headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "no-store" },
  });
}
