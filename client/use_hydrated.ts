import { useEffect, useState } from "react";

/**
 * False during server rendering and the first (hydrating) client render, true after: render
 * browser-only content behind it, so the server HTML and the first client render agree.
 */
export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}
