/**
 * Browser entry: start loading monitoring if it is configured, then hydrate the
 * server-rendered shell with the page for this URL's path.
 */
import { hydrateRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { readClientConfig, readPageData } from "./config.ts";
import { ErrorBoundary } from "./error_boundary.tsx";
import { ErrorBuffer } from "./error_buffer.ts";
import { resolvePage } from "./page_table.ts";
import { routes } from "./routes.tsx";
import { disable as disableSentry } from "./sentry.ts";
import "./styles.css";

const config = readClientConfig();
const errors = new ErrorBuffer();
if (config.sentry) {
  const sentry = config.sentry;
  errors.listen(window);
  // Requested before hydration, so that an app that fails to start (no #root, a throw in
  // hydrateRoot) still gets monitoring and its buffered error is sent. The chunk is fetched
  // in parallel and evaluated in a later task: nothing is added to what hydration waits for.
  import("./monitoring.ts").then((m) => m.startMonitoring(sentry, errors));
} else {
  disableSentry();
}

const root = document.getElementById("root");
if (root === null) throw new Error("#root is missing from the server-rendered page");

// The same lookup the server made for this path, and the data its loader gave the server's
// render, so hydration finds the same page with the same data.
const page = resolvePage(routes, location.pathname);
const data = readPageData();

hydrateRoot(
  root,
  <ErrorBoundary>
    <App page={page} data={data} />
  </ErrorBoundary>,
  {
    onUncaughtError: (error, info) =>
      report(error, "react.uncaught", false, info.componentStack ?? undefined),
    onCaughtError: (error, info) =>
      report(error, "react.caught", true, info.componentStack ?? undefined),
    onRecoverableError: (error, info) =>
      report(error, "react.recoverable", true, info.componentStack ?? undefined),
  },
);

function report(error: unknown, mechanism: string, handled: boolean, componentStack?: string) {
  // Keep React's default of logging to the console, so problems are visible while developing.
  console.error(error);
  if (config.sentry) errors.capture(error, { mechanism, handled, componentStack });
}
