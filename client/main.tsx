/** Browser entry: start loading monitoring if configured, load the page's chunk, hydrate. */
import type { ErrorInfo } from "react";
import { hydrateRoot } from "react-dom/client";
import { App } from "./App.tsx";
import { readClientConfig, readPageData } from "./config.ts";
import { ErrorBoundary } from "./error_boundary.tsx";
import { ErrorBuffer } from "./error_buffer.ts";
import { disable as disableSentry } from "./sentry.ts";
import "./styles.css";

const { sentry } = readClientConfig();
const errors = new ErrorBuffer();
if (sentry) {
  errors.listen(window);
  // Requested before hydration so a failed start still reports; evaluated later, off its path.
  import("./monitoring.ts").then((m) => m.startMonitoring(sentry, errors));
} else {
  disableSentry();
}

const root = document.getElementById("root");
if (root === null) throw new Error("#root is missing from the server-rendered page");

// The page's own chunk and export, as the server rendered it (its HTML preloads the chunk): loaded
// before hydration, so the first render matches the server's and nothing flashes.
const { page, component } = root.dataset;
if (!page || !component) throw new Error("#root names no page chunk");
const Page = (await import(page))[component];
const data = readPageData();

hydrateRoot(
  root,
  <ErrorBoundary>
    <App Page={Page} data={data} />
  </ErrorBoundary>,
  {
    onUncaughtError: (error, info) => report(error, info, "react.uncaught", false),
    onCaughtError: (error, info) => report(error, info, "react.caught", true),
    onRecoverableError: (error, info) => report(error, info, "react.recoverable", true),
  },
);

function report(error: unknown, info: ErrorInfo, mechanism: string, handled: boolean) {
  // Keep React's default of logging to the console, so problems are visible while developing.
  console.error(error);
  const componentStack = info.componentStack ?? undefined;
  if (sentry) errors.capture(error, { mechanism, handled, componentStack });
}
