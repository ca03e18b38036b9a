import assert from "node:assert/strict";
import {
  explainListenError,
  formatHost,
  listeningUrl,
  startupBanner,
} from "../../../server/lifecycle/listen_address.ts";
import { loadConfig, StartupError } from "../../../server/lifecycle/config.ts";

const at = { hostname: "127.0.0.1", port: 8000 };

Deno.test("explainListenError: one line naming the variable for each failure a user causes", () => {
  const cases: [unknown, RegExp][] = [
    [
      new Deno.errors.AddrInUse("Address already in use (os error 98)"),
      /^PORT: 8000 is already in use/,
    ],
    [
      new Deno.errors.AddrNotAvailable("os error 99"),
      /^HOST: 127\.0\.0\.1 is not an address of this machine/,
    ],
    [
      new Deno.errors.PermissionDenied("os error 13"),
      /^PORT: the system does not allow .* port 8000/,
    ],
    [
      new Deno.errors.NotCapable("Requires net access"),
      /^missing permission --allow-net=127\.0\.0\.1:8000 /,
    ],
    [
      new Error("failed to lookup address information: Name or service not known"),
      /^HOST: cannot resolve "127\.0\.0\.1"/,
    ],
  ];
  for (const [error, line] of cases) {
    const explained = explainListenError(error, at);
    assert.ok(explained instanceof StartupError);
    assert.match(explained.message, line);
    assert.ok(!explained.message.includes("\n"));
  }
});

Deno.test("explainListenError: anything else is left as it is", () => {
  const bug = new TypeError("not a listen failure");
  assert.equal(explainListenError(bug, at), bug);
  assert.equal(explainListenError("a string", at), "a string");
});

Deno.test("listeningUrl: IPv6 in brackets, wildcard addresses as localhost", () => {
  assert.equal(listeningUrl({ hostname: "::1", port: 8000 }), "http://[::1]:8000/");
  assert.equal(listeningUrl({ hostname: "fe80::1", port: 1 }), "http://[fe80::1]:1/");
  assert.equal(listeningUrl({ hostname: "127.0.0.1", port: 80 }), "http://127.0.0.1:80/");
  assert.equal(listeningUrl({ hostname: "0.0.0.0", port: 8000 }), "http://localhost:8000/");
  assert.equal(listeningUrl({ hostname: "::", port: 8000 }), "http://localhost:8000/");
  assert.equal(listeningUrl({ hostname: "example.com", port: 3 }), "http://example.com:3/");
  assert.equal(formatHost("[::1]"), "[::1]");
});

const addr: Deno.NetAddr = { transport: "tcp", hostname: "127.0.0.1", port: 8000 };

Deno.test("banner: where it listens, and that monitoring is off and how to turn it on", () => {
  assert.deepEqual(startupBanner(addr, loadConfig({}), "r1"), [
    "Listening on http://127.0.0.1:8000/ (release r1)",
    "Monitoring is off: set SENTRY_DSN to report errors and traces to Sentry.",
    "Any Host is answered: set ALLOWED_HOSTS to this app's host names in production.",
  ]);
  // Named hosts, or dev (loopback only): nothing to say.
  const hosts = loadConfig({ ALLOWED_HOSTS: "app.example" });
  assert.equal(startupBanner(addr, hosts, "r1").length, 2);
  assert.equal(startupBanner(addr, loadConfig({ DEV_MODE: "true" }), "r1").length, 2);
});

Deno.test("banner: with a DSN, that monitoring is on, where to and how much, never the key", () => {
  const config = loadConfig({
    SENTRY_DSN: "https://publickey42@o7.ingest.sentry.io/4501",
    SENTRY_TRACES_SAMPLE_RATE: "0.25",
    SENTRY_ENVIRONMENT: "staging",
  });
  const lines = startupBanner(addr, config, "r2");
  assert.deepEqual(lines.slice(1, 2), [
    "Monitoring is on: errors and 25% of page requests traced go to Sentry at " +
    "o7.ingest.sentry.io, project 4501, environment staging.",
  ]);
  assert.doesNotMatch(lines.join("\n"), /publickey42/);
  // The default rate reads as it is configured.
  const byDefault = startupBanner(addr, loadConfig({ SENTRY_DSN: "https://k@h.example/1" }), "r");
  assert.match(byDefault[1], /errors and 10% of page requests traced/);
});
