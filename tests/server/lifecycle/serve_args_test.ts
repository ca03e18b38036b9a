import assert from "node:assert/strict";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { servingArgs, V8_FLAGS } from "../../../server/lifecycle/serve_args.ts";
import { proxyHosts } from "../../../server/lifecycle/permissions.ts";

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

Deno.test("servingArgs: an outbound proxy's host is granted next to the ingests'", () => {
  const config = loadConfig({ PORT: "9000", SENTRY_DSN: "https://key@o1.ingest.sentry.io/5" });
  const proxies = proxyHosts({
    HTTPS_PROXY: "http://user:secret@proxy.internal:3128",
    http_proxy: "10.0.0.9",
    HTTP_PROXY: "not a url at all",
  });
  assert.deepEqual(proxies, ["proxy.internal:3128", "10.0.0.9:80"]);
  const [net] = servingArgs(config, "run", proxies).filter((a) => a.startsWith("--allow-net="));
  assert.equal(net, "--allow-net=0.0.0.0:9000,o1.ingest.sentry.io,proxy.internal:3128,10.0.0.9:80");
  assert.deepEqual(proxyHosts({}), []);
});
