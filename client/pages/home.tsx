import { useHydrated } from "../use_hydrated.ts";

/** `/`: the shell's only page; replace it with the product's first screen. */
export function HomePage() {
  const hydrated = useHydrated();
  return (
    <>
      <h1>It works</h1>
      <p>
        This page was rendered on the server and is{" "}
        <strong>{hydrated ? "now interactive" : "waiting for JavaScript"}</strong>.
      </p>
    </>
  );
}
