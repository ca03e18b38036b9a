import { useEffect, useState } from "react";

/**
 * The application shell. The server renders it to HTML once; the browser hydrates it.
 * Product screens go inside `<main>`.
 */
export function App() {
  // Starts false on both sides so the server HTML and the first client render agree;
  // the effect runs only in the browser, which makes hydration visible.
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);

  return (
    <div className="shell" data-hydrated={hydrated ? "true" : "false"}>
      <header className="shell-header">
        <span className="shell-brand">App</span>
      </header>
      <main className="shell-main">
        <h1>It works</h1>
        <p>
          This page was rendered on the server and is{" "}
          <strong>{hydrated ? "now interactive" : "waiting for JavaScript"}</strong>.
        </p>
      </main>
    </div>
  );
}
