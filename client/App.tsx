import type { ComponentType } from "react";
import { useHydrated } from "./use_hydrated.ts";

/** The application shell around one page, rendered by the server and hydrated in the browser. */
export function App({ Page, data }: {
  // deno-lint-ignore no-explicit-any -- definePage (server/define.ts) checked it against its data
  readonly Page: ComponentType<{ readonly data: any }>;
  readonly data?: unknown;
}) {
  // Marks hydration in the DOM, for the tests and for styles that need JavaScript.
  const hydrated = useHydrated();
  return (
    <div className="shell" data-hydrated={hydrated ? "true" : "false"}>
      <header className="shell-header">
        <span className="shell-brand">App</span>
      </header>
      <main className="shell-main">
        <Page data={data} />
      </main>
    </div>
  );
}
