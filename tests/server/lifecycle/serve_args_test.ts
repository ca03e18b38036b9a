import assert from "node:assert/strict";
import {
  CONFIG_VARIABLES,
  ConfigError,
  DEV_VARIABLES,
  loadConfig,
} from "../../../server/lifecycle/config.ts";
import {
  netHosts,
  parseAppPermissions,
  proxyHosts,
  servingArgs,
  V8_FLAGS,
} from "../../../server/lifecycle/serve_args.ts";

const allow = (args: string[], kind: string) =>
  args.find((a) => a === `--allow-${kind}` || a.startsWith(`--allow-${kind}=`));

Deno.test("servingArgs: every mode caps V8's young generation, as a Deno flag before the script", () => {
  const config = loadConfig({ PORT: "9000" });
  for (const mode of ["run", "parallel", "dev"] as const) {
    const args = servingArgs(config, {}, { mode });
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
  assert.equal(
    allow(servingArgs(config, {}, { proxies }), "net"),
    "--allow-net=0.0.0.0:9000,o1.ingest.sentry.io,proxy.internal:3128,10.0.0.9:80",
  );
  assert.deepEqual(proxyHosts({}), []);
});

Deno.test("servingArgs: the app's grants join the shell's own, kind by kind; true grants all", () => {
  const config = loadConfig({ PORT: "9000", HOST: "127.0.0.1" });
  const app = { net: ["api.example.com:443", "127.0.0.1:9000"], env: ["API_KEY"], read: ["data"] };
  const args = servingArgs(config, app);
  assert.equal(allow(args, "net"), "--allow-net=127.0.0.1:9000,api.example.com:443");
  assert.equal(allow(args, "read"), "--allow-read=static,data");
  assert.equal(
    allow(args, "env"),
    `--allow-env=${["NODE_ENV", ...CONFIG_VARIABLES, "API_KEY"].join(",")}`,
  );
  assert.equal(args.filter((a) => a.startsWith("--allow-")).length, 3, "no other kind");
  const all = servingArgs(config, { net: true, env: false, read: [] });
  assert.equal(allow(all, "net"), "--allow-net");
  assert.equal(allow(all, "env"), `--allow-env=${["NODE_ENV", ...CONFIG_VARIABLES].join(",")}`);
  assert.equal(allow(all, "read"), "--allow-read=static");
});

Deno.test("servingArgs: every kind of Deno's permission sets, none granted unless deno.json says", () => {
  const config = loadConfig({ PORT: "9000", HOST: "127.0.0.1" });
  const none = servingArgs(config, { write: [], sys: false, run: [], ffi: [], import: [] });
  assert.deepEqual(none, servingArgs(config), "empty lists and false grant nothing");
  for (const kind of ["write", "sys", "run", "ffi", "import"]) {
    assert.equal(allow(none, kind), undefined);
  }
  const app = {
    write: ["data", "/tmp/uploads"],
    sys: ["hostname", "osRelease"],
    run: ["convert"],
    ffi: ["./lib/libimage.so"],
    import: ["cdn.example.com:443"],
  };
  const args = servingArgs(config, app);
  assert.equal(allow(args, "write"), "--allow-write=data,/tmp/uploads");
  assert.equal(allow(args, "sys"), "--allow-sys=hostname,osRelease");
  assert.equal(allow(args, "run"), "--allow-run=convert");
  assert.equal(allow(args, "ffi"), "--allow-ffi=./lib/libimage.so");
  assert.equal(allow(args, "import"), "--allow-import=cdn.example.com:443");
  assert.equal(allow(servingArgs(config, { write: true }), "write"), "--allow-write");
  // The same in dev and under deno serve --parallel, before the script.
  for (const mode of ["dev", "parallel"] as const) {
    const flags = servingArgs(config, app, { mode });
    assert.equal(allow(flags, "write"), "--allow-write=data,/tmp/uploads");
    assert.ok(flags.indexOf("--allow-run=convert") < flags.findIndex((a) => a.endsWith(".ts")));
  }
  assert.deepEqual(parseAppPermissions(JSON.stringify({ permissions: { app } })), app);
});

Deno.test("servingArgs: the app settings' variables are granted by name, in every mode", () => {
  const config = loadConfig({ PORT: "9000" });
  for (const mode of ["run", "parallel", "dev"] as const) {
    const names = allow(servingArgs(config, {}, { mode, settings: ["RETRIES", "API_URL"] }), "env")!
      .split("=")[1].split(",");
    assert.ok(names.includes("RETRIES") && names.includes("API_URL"), mode);
  }
});

Deno.test("servingArgs: dev grants what production does, plus the dev modules and switches", () => {
  const config = loadConfig({ PORT: "0", HOST: "127.0.0.1" });
  const app = { env: ["API_KEY"], net: ["127.0.0.1:7000"] };
  const run = servingArgs(config, app);
  const dev = servingArgs(config, app, { mode: "dev" });
  assert.equal(allow(dev, "net"), allow(run, "net"));
  assert.equal(allow(dev, "read"), "--allow-read=static,client,server");
  const names = (args: string[]) => allow(args, "env")!.split("=")[1].split(",").sort();
  assert.deepEqual(names(dev), [...names(run), ...DEV_VARIABLES].sort());
  assert.doesNotMatch(run.join(" "), /DEV_/, "production never reads the dev switches");
  assert.deepEqual(dev.slice(-2), ["main.ts", "--until-stdin-closes"]);
});

Deno.test("servingArgs: the PUBLIC_* variables are granted by name and named to the server", () => {
  const config = loadConfig({ PORT: "0", PUBLIC_A: "1", PUBLIC_B: "2", SECRET: "x" });
  for (const mode of ["run", "parallel", "dev"] as const) {
    const args = servingArgs(config, {}, { mode });
    const names = allow(args, "env")!.split("=")[1].split(",");
    assert.ok(names.includes("PUBLIC_A") && names.includes("PUBLIC_B"), mode);
    assert.ok(!names.includes("SECRET"), mode);
    assert.deepEqual(args.slice(-2), [
      "--public-variables=PUBLIC_A,PUBLIC_B",
      "--until-stdin-closes",
    ]);
  }
  assert.ok(!servingArgs(loadConfig({})).some((a) => a.startsWith("--public-variables")));
});

Deno.test("netHosts: the listen address, then the ingests; a port-less grant covers its host", () => {
  const config = loadConfig({
    HOST: "::1",
    PORT: "8000",
    SENTRY_DSN: "https://k@o1.ingest.sentry.io/5",
    TUNNEL_ALLOWED_DSNS: "https://k2@o1.ingest.sentry.io/6,http://k3@[::2]:9000/7",
  });
  assert.deepEqual(netHosts(config), ["[::1]:8000", "o1.ingest.sentry.io", "[::2]:9000"]);
});

Deno.test("parseAppPermissions: Deno's permission-set lists under permissions.app", async () => {
  assert.deepEqual(parseAppPermissions("{}"), {});
  assert.deepEqual(parseAppPermissions('{"permissions":{"other":{"net":true}}}'), {});
  const app = { net: ["127.0.0.1:9000"], env: ["API_KEY"], read: [] };
  assert.deepEqual(parseAppPermissions(JSON.stringify({ permissions: { app } })), app);
  assert.deepEqual(parseAppPermissions('{"permissions":{"app":{"net":true}}}'), { net: true });
  // The project's own deno.json, whatever the team granted: valid, and read as it is written.
  const own = await Deno.readTextFile(new URL("../../../deno.json", import.meta.url));
  assert.deepEqual(parseAppPermissions(own), JSON.parse(own).permissions?.app ?? {});
});

Deno.test("parseAppPermissions: what cannot be granted stops start-up with one line", () => {
  const cases: [unknown, RegExp][] = [
    [[], /^permissions\.app in deno\.json: expected an object$/],
    [{ env: "API_KEY" }, /^permissions\.app\.env in deno\.json: expected a list of strings/],
    [
      { net: ["a.example:1,b.example:2"] },
      /^permissions\.app\.net in deno\.json: expected .*commas/,
    ],
    [{ env: [""] }, /^permissions\.app\.env in deno\.json/],
    [{ write: 5 }, /^permissions\.app\.write in deno\.json: expected a list of .* or true, got 5$/],
    [{ run: { allow: ["ls"] } }, /^permissions\.app\.run in deno\.json: expected a list/],
    [{ sys: "hostname" }, /^permissions\.app\.sys in deno\.json: expected a list/],
    // Least privilege: each kind on its own, never all of them at once.
    [
      { all: true },
      /^permissions\.app\.all in deno\.json: expected one of net, env, read, write, sys, run, ffi, import$/,
    ],
    [{ hrtime: true }, /^permissions\.app\.hrtime in deno\.json: expected one of net, env/],
  ];
  for (const [app, pattern] of cases) {
    assert.throws(() => parseAppPermissions(JSON.stringify({ permissions: { app } })), (e) => {
      assert.ok(e instanceof ConfigError);
      assert.match(e.message, pattern);
      assert.ok(!e.message.includes("\n"));
      return true;
    });
  }
  assert.throws(
    () => parseAppPermissions("{ // a comment\n}"),
    /^ConfigError: deno\.json: expected JSON/,
  );
});
