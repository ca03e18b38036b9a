import { useEffect, useState } from "react";

/** False until hydrated: browser-only content behind it keeps hydration matching the server. */
export function useHydrated(): boolean {
  const [hydrated, setHydrated] = useState(false);
  useEffect(() => setHydrated(true), []);
  return hydrated;
}
