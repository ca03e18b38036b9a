// Development only: `deno task dev` serves this file as it is at /_dev/client.js (it is never
// bundled, so it keeps working while the app's build is broken). It reloads the page after a
// rebuild or a server restart, and draws build and server errors over the page until they are
// fixed.

const OVERLAY_ID = "dev-build-errors";
// EventSource alone retries at the server's pace forever, logging every refused connection
// while the server restarts; reconnecting ourselves lets the wait grow instead.
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;
let retryMs = FIRST_RETRY_MS;
let served;

function connect() {
  const source = new EventSource("/_dev/reload");
  source.addEventListener("open", () => retryMs = FIRST_RETRY_MS);
  source.addEventListener("hello", (event) => {
    const { session, buildId } = JSON.parse(event.data);
    const current = `${session}/${buildId}`;
    // A reconnect to a restarted server (or its error page), or to a build made while away.
    if (served !== undefined && served !== current) location.reload();
    served = current;
  });
  source.addEventListener("reload", () => location.reload());
  source.addEventListener("build-error", (event) => {
    const { errors } = JSON.parse(event.data);
    showErrors(`Build failed (${errors.length} error${errors.length === 1 ? "" : "s"})`, errors);
  });
  source.addEventListener("server-error", (event) => {
    showErrors("The server failed to start", JSON.parse(event.data).errors);
  });
  source.addEventListener("error", () => {
    source.close();
    setTimeout(connect, retryMs);
    retryMs = Math.min(retryMs * 1.5, MAX_RETRY_MS);
  });
}
connect();

function showErrors(title, errors) {
  document.getElementById(OVERLAY_ID)?.remove();
  const overlay = element("div", {
    position: "fixed",
    inset: "0",
    zIndex: "2147483647",
    overflow: "auto",
    padding: "2rem",
    // Opaque: the page under it (the last good one, or the server's error page) must not show
    // through.
    background: "#141414",
    color: "#f5f5f5",
    font: "14px/1.5 ui-monospace, monospace",
  });
  overlay.id = OVERLAY_ID;
  overlay.setAttribute("role", "alert");
  const heading = element("h2", { color: "#ff6b6b", margin: "0 0 1rem" });
  heading.textContent = title;
  overlay.append(heading);
  for (const error of errors) {
    const where = element("div", { color: "#8ecbff" });
    where.textContent = [error.file, error.line, error.column].filter((p) => p !== undefined)
      .join(":");
    const text = element("div", { margin: "0.2rem 0" });
    text.textContent = error.text;
    const line = element("pre", { margin: "0 0 1.2rem", color: "#ccc", whiteSpace: "pre-wrap" });
    line.textContent = error.lineText ?? "";
    const stack = element("pre", { margin: "0 0 1.2rem", color: "#999", whiteSpace: "pre-wrap" });
    stack.textContent = error.stack ?? "";
    overlay.append(where, text, line, stack);
  }
  const hint = element("p", { color: "#aaa" });
  hint.textContent = "Fix the file and save: the page reloads by itself.";
  overlay.append(hint);
  document.body.append(overlay);
}

// Styles go through the CSSOM, which the page's Content Security Policy allows.
function element(tag, style) {
  const node = document.createElement(tag);
  Object.assign(node.style, style);
  return node;
}
