import type { ResolvedPage } from "./page_table.ts";
import { useHydrated } from "./use_hydrated.ts";

/** The application shell around one page, rendered by the server and hydrated in the browser. */
export function App({ page, data }: { readonly page: ResolvedPage; readonly data?: unknown }) {
  // Marks hydration in the DOM, for the tests and for styles that need JavaScript.
  const hydrated = useHydrated();
  const { Page } = page;
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
