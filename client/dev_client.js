// Dev only, unbundled (so it runs on the error page): reload when /_dev/reload's process changes.
let session;
let retryMs = 250;

function connect() {
  const source = new EventSource("/_dev/reload");
  source.addEventListener("hello", (event) => {
    retryMs = 250;
    if (session !== undefined && session !== event.data) location.reload();
    session = event.data;
  });
  // Backing off (EventSource retries at a fixed pace) keeps the console quiet while dev is stopped.
  source.addEventListener("error", () => {
    source.close();
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 2, 5_000);
  });
}
connect();
