import assert from "node:assert/strict";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { servingArgs, V8_FLAGS } from "../../../server/lifecycle/serve_args.ts";

Deno.test("servingArgs: both modes cap V8's young generation, as a Deno flag before the script", () => {
  const config = loadConfig({ PORT: "9000" });
  for (const mode of ["run", "parallel"] as const) {
    const args = servingArgs(config, mode);
    const script = args.findIndex((a) => a.endsWith(".ts"));
    // After the script it would be one of the script's own arguments, and V8 would never see it.
    assert.ok(args.indexOf(V8_FLAGS) > 0 && args.indexOf(V8_FLAGS) < script, args.join(" "));
  }
  assert.match(V8_FLAGS, /^--v8-flags=--max-semi-space-size=\d+$/);
});
