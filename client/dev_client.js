// Development only: served as it is at /_dev/client.js (never bundled, so it runs on the error
// page too). The page reloads when the process that answers /_dev/reload changes: the server
// restarted after a save, or the error page took its place or gave it back.
let session;
let retryMs = 250;

function connect() {
  const source = new EventSource("/_dev/reload");
  source.addEventListener("hello", (event) => {
    retryMs = 250;
    if (session !== undefined && session !== event.data) location.reload();
    session = event.data;
  });
  // EventSource alone would retry at a fixed pace forever; waiting longer each time keeps the
  // console quiet while `deno task dev` is stopped.
  source.addEventListener("error", () => {
    source.close();
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 5_000);
  });
}
connect();
