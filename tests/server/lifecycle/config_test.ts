import assert from "node:assert/strict";
import * as config from "../../../server/lifecycle/config.ts";
import {
  boolean,
  ConfigError,
  defineSettings,
  integer,
  list,
  loadConfig,
  oneOf,
  rate,
  text,
  url,
} from "../../../server/lifecycle/config.ts";
import { BODY_DEFAULTS } from "../../../server/http/body_budget.ts";

Deno.test("loadConfig: defaults with an empty environment", () => {
  const config = loadConfig({});
  assert.equal(config.port, 8000);
  assert.equal(config.host, "0.0.0.0");
  assert.equal(config.sentryDsn, undefined);
  assert.equal(config.sentryEnvironment, "production");
  assert.equal(config.sentryRelease, undefined);
  assert.equal(config.tracesSampleRate, 0.1);
  assert.deepEqual(config.tunnelAllowedDsns, []);
  assert.equal(config.tunnelMaxBodyBytes, 20 * 1024 * 1024);
  assert.deepEqual(config.bodies, { ...BODY_DEFAULTS, clientLimits: true });
  assert.equal(config.tunnelRateLimit, 600);
  assert.equal(config.trustProxy, false);
  assert.equal(config.serveSourceMaps, false);
});

Deno.test("loadConfig: reads every variable", () => {
  const config = loadConfig({
    PORT: "0",
    HOST: "127.0.0.1",
    SENTRY_DSN: "https://key1@o1.ingest.sentry.io/11",
    SENTRY_ENVIRONMENT: "staging",
    SENTRY_RELEASE: "v1.2.3",
    SENTRY_TRACES_SAMPLE_RATE: "0.25",
    TUNNEL_ALLOWED_DSNS: " http://key2@10.0.0.5:9000/sentry/22 , https://key3@example.com/33",
    TUNNEL_MAX_BODY_BYTES: "1024",
    TUNNEL_RATE_LIMIT: "0",
    BODY_READ_TIMEOUT_MS: "20000",
    BODY_MIN_RATE: "1024",
    BODY_MEMORY_BYTES: "1048576",
    TRUST_PROXY: "true",
    SERVE_SOURCE_MAPS: "1",
  });
  assert.equal(config.port, 0);
  assert.equal(config.host, "127.0.0.1");
  assert.equal(config.sentryDsn, "https://key1@o1.ingest.sentry.io/11");
  assert.equal(config.sentryEnvironment, "staging");
  assert.equal(config.sentryRelease, "v1.2.3");
  assert.equal(config.tracesSampleRate, 0.25);
  assert.deepEqual(config.tunnelAllowedDsns.map((d) => d.projectId), ["11", "22", "33"]);
  assert.equal(config.tunnelAllowedDsns[1].path, "/sentry");
  assert.equal(config.tunnelMaxBodyBytes, 1024);
  // Per-client shares of the body budget are off with the rate limit.
  const bodies = {
    readTimeoutMs: 20_000,
    minRate: 1024,
    memoryBytes: 1 << 20,
    clientLimits: false,
  };
  assert.deepEqual(config.bodies, bodies);
  assert.equal(config.tunnelRateLimit, 0);
  assert.equal(config.trustProxy, true);
  assert.equal(config.serveSourceMaps, true);
});

Deno.test("loadConfig: empty values count as unset", () => {
  const config = loadConfig({ PORT: "", SENTRY_DSN: "  ", TUNNEL_ALLOWED_DSNS: ", ," });
  assert.equal(config.port, 8000);
  assert.equal(config.sentryDsn, undefined);
  assert.deepEqual(config.tunnelAllowedDsns, []);
});

for (
  const [env, pattern] of [
    [{ PORT: "abc" }, /^PORT: expected an integer from 0 to 65535, got "abc"$/],
    [{ PORT: "65536" }, /^PORT: expected an integer/],
    [{ PORT: "-1" }, /^PORT: expected an integer/],
    [{ PORT: "80.5" }, /^PORT: expected an integer/],
    [{ SENTRY_DSN: "not a dsn" }, /^SENTRY_DSN: expected a Sentry DSN/],
    [{ SENTRY_DSN: "https://o1.ingest.sentry.io/1" }, /^SENTRY_DSN: expected a Sentry DSN/],
    [{ TUNNEL_ALLOWED_DSNS: "https://k@h/1,ftp://k@h/2" }, /^TUNNEL_ALLOWED_DSNS: expected/],
    // Browsers would see it; the message must not repeat it either.
    [{ SENTRY_DSN: "https://k:hunter2@h/1" }, /^SENTRY_DSN: the DSN holds a secret key \([^2]*$/],
    [{ TUNNEL_ALLOWED_DSNS: "https://k:hunter2@h/1" }, /^TUNNEL_ALLOWED_DSNS: the DSN holds a/],
    [{ SENTRY_TRACES_SAMPLE_RATE: "1.5" }, /^SENTRY_TRACES_SAMPLE_RATE: expected a number/],
    [{ SENTRY_TRACES_SAMPLE_RATE: "half" }, /^SENTRY_TRACES_SAMPLE_RATE: expected a number/],
    [{ TUNNEL_MAX_BODY_BYTES: "0" }, /^TUNNEL_MAX_BODY_BYTES: expected an integer from 1/],
    [{ TUNNEL_RATE_LIMIT: "-1" }, /^TUNNEL_RATE_LIMIT: expected an integer from 0/],
    [{ BODY_READ_TIMEOUT_MS: "0" }, /^BODY_READ_TIMEOUT_MS: expected an integer from 1/],
    [{ BODY_MIN_RATE: "8k" }, /^BODY_MIN_RATE: expected an integer from 1/],
    [{ BODY_MEMORY_BYTES: "64MiB" }, /^BODY_MEMORY_BYTES: expected an integer from 1/],
    [
      { TRUST_PROXY: "maybe" },
      /^TRUST_PROXY: expected true, false, a hop count or addresses like 10.0.0.0\/8, got "maybe"$/,
    ],
    [{ SERVE_SOURCE_MAPS: "2" }, /^SERVE_SOURCE_MAPS: expected true or false/],
  ] as const
) {
  Deno.test(`loadConfig: rejects ${JSON.stringify(env)}`, () => {
    assert.throws(() => loadConfig(env), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, pattern);
      assert.ok(!error.message.includes("\n"), "the reason is one line");
      return true;
    });
  });
}

Deno.test("loadConfig: a long bad value is shortened in the message", () => {
  assert.throws(
    () => loadConfig({ PORT: "9".repeat(500) }),
    (error: Error) => error.message.length < 200,
  );
});

Deno.test("loadConfig: HOST is an IP address or a host name; IPv6 brackets are dropped", () => {
  for (const host of ["127.0.0.1", "::1", "0.0.0.0", "::", "localhost", "my-host.example.com"]) {
    assert.equal(loadConfig({ HOST: host }).host, host);
  }
  assert.equal(loadConfig({ HOST: "[::1]" }).host, "::1");
  for (const host of ["a b", "a,b", "host/path", "http://x", "-bad", "[::1"]) {
    assert.throws(
      () => loadConfig({ HOST: host }),
      (e) => e instanceof ConfigError && e.message.startsWith("HOST: expected an IP address"),
      host,
    );
  }
});

Deno.test("TUNNEL_PATH: a plain path off the server's own routes, else one line", () => {
  assert.equal(loadConfig({}).tunnelPath, "/monitoring");
  assert.equal(loadConfig({ TUNNEL_PATH: "/t/a8f3" }).tunnelPath, "/t/a8f3");
  for (
    const bad of [
      "monitoring",
      "/",
      "/a/",
      "//a",
      "/a b",
      "/a?b",
      "/a/../b",
      "/api/x",
      "/_dev/t",
      "/healthz",
      "/build/x",
      "/%2e",
    ]
  ) {
    assert.throws(() => loadConfig({ TUNNEL_PATH: bad }), (error: Error) => {
      assert.ok(error instanceof ConfigError, bad);
      assert.match(error.message, /^TUNNEL_PATH: expected a path like \/monitoring/);
      assert.ok(!error.message.includes("\n"));
      return true;
    });
  }
});

Deno.test("loadConfig: PUBLIC_* variables only reach publicVariables; API_MAX_BODY_BYTES", () => {
  const config = loadConfig({
    PUBLIC_API_ORIGIN: "https://api.example.com",
    PUBLIC_FLAG_2: "",
    PUBLIC_lower: "no",
    PUBLICX: "no",
    SECRET_TOKEN: "s3cret",
    API_MAX_BODY_BYTES: "2048",
  });
  assert.deepEqual(config.publicVariables, {
    PUBLIC_API_ORIGIN: "https://api.example.com",
    PUBLIC_FLAG_2: "",
  });
  assert.equal(config.apiMaxBodyBytes, 2048);
  assert.equal(loadConfig({}).apiMaxBodyBytes, 1024 * 1024);
  assert.throws(() => loadConfig({ API_MAX_BODY_BYTES: "0" }), /API_MAX_BODY_BYTES: expected/);
});

Deno.test("SENTRY_TRACE_PROPAGATION_TARGETS: http(s) URL prefixes; SENTRY_ENABLE_LOGS", () => {
  // PORT=0: the system picks the port, so the app has no own origin to add (see ALLOWED_HOSTS).
  const unset = loadConfig({ PORT: "0" });
  assert.deepEqual(unset.tracePropagationTargets, []);
  assert.equal(unset.enableLogs, false);
  const config = loadConfig({
    PORT: "0",
    SENTRY_TRACE_PROPAGATION_TARGETS: " https://API.example.com , http://10.0.0.5:8080/v1/,",
    SENTRY_ENABLE_LOGS: "yes",
  });
  // An origin stands for all its paths: its prefix ends with "/", so no other host shares it.
  assert.deepEqual(config.tracePropagationTargets, [
    "https://api.example.com/",
    "http://10.0.0.5:8080/v1/",
  ]);
  assert.equal(config.enableLogs, true);
  for (const bad of ["api.example.com", "*.example.com", "ftp://example.com", "https://u:p@h/"]) {
    assert.throws(
      () => loadConfig({ SENTRY_TRACE_PROPAGATION_TARGETS: `https://ok.example, ${bad}` }),
      /^ConfigError: SENTRY_TRACE_PROPAGATION_TARGETS: expected URLs like https:\/\/api/,
    );
  }
  assert.throws(() => loadConfig({ SENTRY_ENABLE_LOGS: "2" }), /SENTRY_ENABLE_LOGS: expected/);
});

Deno.test("loadConfig: Sentry's browser products are off unless their variables say otherwise", () => {
  const off = loadConfig({});
  assert.deepEqual(
    [off.enableLogs, off.replaysSessionSampleRate, off.replaysOnErrorSampleRate],
    [false, 0, 0],
  );
  assert.deepEqual([off.profilesSampleRate, off.feedback], [0, false]);
  const on = loadConfig({
    SENTRY_ENABLE_LOGS: "true",
    SENTRY_REPLAYS_SESSION_SAMPLE_RATE: "0.1",
    SENTRY_REPLAYS_ON_ERROR_SAMPLE_RATE: "1",
    SENTRY_PROFILES_SAMPLE_RATE: ".5",
    SENTRY_FEEDBACK: "yes",
  });
  assert.deepEqual(
    [on.enableLogs, on.replaysSessionSampleRate, on.replaysOnErrorSampleRate],
    [true, 0.1, 1],
  );
  assert.deepEqual([on.profilesSampleRate, on.feedback], [0.5, true]);
  for (
    const [name, value, reason] of [
      ["SENTRY_REPLAYS_SESSION_SAMPLE_RATE", "2", "a number from 0 to 1"],
      ["SENTRY_REPLAYS_ON_ERROR_SAMPLE_RATE", "-0.5", "a number from 0 to 1"],
      ["SENTRY_PROFILES_SAMPLE_RATE", "all", "a number from 0 to 1"],
      ["SENTRY_ENABLE_LOGS", "verbose", "true or false"],
      ["SENTRY_FEEDBACK", "2", "true or false"],
    ]
  ) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (error) =>
        error instanceof ConfigError && error.message.startsWith(`${name}: expected ${reason}`),
    );
  }
});

Deno.test("the exported readers give the shell's one-line reasons", () => {
  assert.equal(integer(0, 10)("7"), 7);
  assert.equal(rate("0.5"), 0.5);
  assert.equal(boolean("ON"), true);
  assert.equal(oneOf("eu", "us")("EU"), "eu");
  assert.deepEqual(list(url)(" https://a.example/x , http://b.example "), [
    "https://a.example/x",
    "http://b.example",
  ]);
  assert.equal(text("any thing"), "any thing");
  const cases: [() => unknown, string][] = [
    [() => integer(0, 10)("x"), 'expected an integer from 0 to 10, got "x"'],
    [() => integer(0, 10)("11"), 'expected an integer from 0 to 10, got "11"'],
    [() => rate("2"), 'expected a number from 0 to 1, got "2"'],
    [() => boolean("perhaps"), 'expected true or false, got "perhaps"'],
    [() => url("ftp://a.example"), 'expected an http(s) URL, got "ftp://a.example"'],
    [() => url("/relative"), 'expected an http(s) URL, got "/relative"'],
  ];
  for (const [read, message] of cases) {
    assert.throws(read, (e) => e instanceof ConfigError && e.message === message);
  }
});

Deno.test("defineSettings: typed values read once; a bad one is kept for start-up, never thrown", () => {
  const names = ["TS_RETRIES", "TS_API_URL", "TS_MODE", "TS_UNSET", "TS_BAD", "TS_LATER_BAD"];
  Deno.env.set("TS_RETRIES", " 3 ");
  Deno.env.set("TS_API_URL", "https://payments.example/v1");
  Deno.env.set("TS_MODE", "");
  try {
    const settings = defineSettings({
      TS_RETRIES: integer(0, 10),
      TS_API_URL: url,
      TS_MODE: oneOf("fast", "safe"),
      TS_UNSET: boolean,
    });
    const retries: number | undefined = settings.TS_RETRIES;
    assert.deepEqual(settings, {
      TS_RETRIES: 3,
      TS_API_URL: "https://payments.example/v1",
      TS_MODE: undefined,
      TS_UNSET: undefined,
    });
    assert.equal(retries, 3);
    assert.deepEqual([config.badSetting], [undefined], "none bad yet");

    Deno.env.set("TS_BAD", "x");
    Deno.env.set("TS_LATER_BAD", "maybe");
    const bad = defineSettings({ TS_BAD: integer(0, 10), TS_LATER_BAD: boolean });
    // Every name stays (the launcher grants them all); the first bad value is the one line.
    assert.deepEqual(Object.keys(bad), ["TS_BAD", "TS_LATER_BAD"]);
    assert.equal(bad.TS_BAD, undefined);
    assert.ok(config.badSetting instanceof ConfigError);
    assert.equal(config.badSetting.message, 'TS_BAD: expected an integer from 0 to 10, got "x"');
  } finally {
    for (const name of names) Deno.env.delete(name);
  }
});

Deno.test("ALLOWED_HOSTS: the app's hosts as Host names them; its own origins, else this machine at PORT", () => {
  const set = loadConfig({
    ALLOWED_HOSTS: "Example.com, ::1",
    SENTRY_TRACE_PROPAGATION_TARGETS: "https://api.example/",
  });
  assert.deepEqual(set.allowedHosts, ["example.com", "[::1]"]);
  assert.deepEqual(set.tracePropagationTargets, [
    "https://api.example/",
    "http://example.com/",
    "https://example.com/",
    "http://[::1]/",
    "https://[::1]/",
  ]);
  const unset = loadConfig({});
  assert.equal(unset.allowedHosts, undefined, "every Host answered");
  assert.deepEqual(unset.tracePropagationTargets.filter((t) => t.startsWith("http:")), [
    "http://localhost:8000/",
    "http://127.0.0.1:8000/",
    "http://[::1]:8000/",
  ]);
  assert.deepEqual(loadConfig({ PORT: "0" }).tracePropagationTargets, []);
  assert.throws(
    () => loadConfig({ ALLOWED_HOSTS: "a.example, evil.example/x" }),
    /^ConfigError: ALLOWED_HOSTS/,
  );
});

Deno.test("delivery and the per-DSN budget: defaults, values, one line for a bad one", () => {
  const defaults = loadConfig({});
  assert.equal(defaults.deliveryQueueBytes, 64 * 1024 * 1024);
  assert.equal(defaults.deliveryMaxAgeS, 3600);
  assert.equal(defaults.tunnelDsnRateLimit, 6000);
  const set = loadConfig({
    DELIVERY_QUEUE_BYTES: "8388608",
    DELIVERY_MAX_AGE_S: "60",
    TUNNEL_DSN_RATE_LIMIT: "0",
  });
  assert.deepEqual(
    [set.deliveryQueueBytes, set.deliveryMaxAgeS, set.tunnelDsnRateLimit],
    [8388608, 60, 0],
  );
  assert.throws(
    () => loadConfig({ DELIVERY_QUEUE_BYTES: "1000" }),
    /^ConfigError: DELIVERY_QUEUE_BYTES: expected an integer from 1048576 to/,
  );
  assert.throws(() => loadConfig({ DELIVERY_MAX_AGE_S: "0" }), /DELIVERY_MAX_AGE_S: expected/);
});
