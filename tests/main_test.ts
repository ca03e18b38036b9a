/**
 * End-to-end over HTTP: the real `main.ts`, started like `deno task start` does, on
 * 127.0.0.1 port 0.
 */
import assert from "node:assert/strict";
import { readManifest } from "../server/build/manifest.ts";
import { startFakeIngest } from "./support/fake_ingest.ts";
import { CONFIG_VARIABLES, loadConfig, SERVER_ENV_VARIABLES } from "../server/lifecycle/config.ts";
import { servingArgs } from "../server/lifecycle/serve_args.ts";
import {
  collectOutput,
  inheritedEnv,
  runServerToExit,
  startServer,
  startTaskArgs,
  startTaskEnv,
} from "./support/server.ts";

const manifest = await readManifest();
const server = await startServer();
const url = (path: string) => new URL(path, server.url).href;

// One server for the whole file: starting a process per test would dominate the run time.
Deno.test.afterAll(async () => {
  await server.stop();
});

Deno.test("GET / is a complete server-rendered HTML5 document", async () => {
  const res = await fetch(url("/"));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.equal(res.headers.get("cache-control"), "no-cache");
  const html = await res.text();
  assert.match(html, /^<!doctype html>\n<html lang="en">/);
  assert.match(html, /<meta charset="utf-8">/);
  assert.match(html, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
  assert.match(html, /<title>[^<]+<\/title>/);
  // <App/> is rendered inside #root by react-dom/server, in its pre-hydration state.
  assert.match(html, /<div id="root"><div class="shell" data-hydrated="false">.*It works/s);
  const script = manifest.script.replace(/[.]/g, "\\.");
  assert.match(html, new RegExp(`<script type="module" src="${script}" nonce="[^"]+"></script>`));
  assert.match(html, new RegExp(`<link rel="modulepreload" href="${script}"`));
  for (const href of manifest.styles) assert.ok(html.includes(`href="${href}"`));
});

Deno.test("HEAD / has the headers of GET / and no body", async () => {
  const get = await fetch(url("/"));
  const getBody = await get.text();
  const head = await fetch(url("/"), { method: "HEAD" });
  assert.equal(head.status, 200);
  assert.equal(head.headers.get("content-type"), get.headers.get("content-type"));
  assert.equal(
    Number(head.headers.get("content-length")),
    new TextEncoder().encode(getBody).length,
  );
  assert.equal(await head.text(), "");
});

Deno.test("the hashed client entry is served immutable, precompressed, with a working ETag", async () => {
  const plain = await fetch(url(manifest.script), { headers: { "accept-encoding": "identity" } });
  assert.equal(plain.status, 200);
  assert.equal(plain.headers.get("content-type"), "text/javascript; charset=utf-8");
  assert.equal(plain.headers.get("cache-control"), "public, max-age=31536000, immutable");
  assert.equal(plain.headers.get("vary"), "Accept-Encoding");
  assert.equal(plain.headers.get("content-encoding"), null);
  const source = new Uint8Array(await plain.arrayBuffer());
  assert.deepEqual(source, await Deno.readFile(`static${manifest.script}`));
  const etag = plain.headers.get("etag");
  assert.match(etag ?? "", /^"[^"]+"$/);

  for (const [accept, encoding, suffix] of [["br", "br", ".br"], ["gzip", "gzip", ".gz"]]) {
    const res = await fetch(url(manifest.script), { headers: { "accept-encoding": accept } });
    assert.equal(res.headers.get("content-encoding"), encoding);
    assert.equal(res.headers.get("vary"), "Accept-Encoding");
    assert.notEqual(res.headers.get("etag"), etag, "each representation has its own ETag");
    // fetch decodes the body; the decoded bytes are the original file.
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), source);
    const stored = await Deno.readFile(`static${manifest.script}${suffix}`);
    assert.equal(Number(res.headers.get("content-length")), stored.length);
  }

  const cached = await fetch(url(manifest.script), {
    headers: { "accept-encoding": "identity", "if-none-match": etag! },
  });
  assert.equal(cached.status, 304);
  assert.equal(cached.headers.get("etag"), etag);
  assert.equal(await cached.text(), "");
  const stale = await fetch(url(manifest.script), {
    headers: { "accept-encoding": "identity", "if-none-match": '"other"' },
  });
  assert.equal(stale.status, 200);
  await stale.body?.cancel();
});

Deno.test("HEAD on an asset: headers and length, no body", async () => {
  const res = await fetch(url(manifest.script), {
    method: "HEAD",
    headers: { "accept-encoding": "br" },
  });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-encoding"), "br");
  const stored = await Deno.stat(`static${manifest.script}.br`);
  assert.equal(Number(res.headers.get("content-length")), stored.size);
  assert.equal(await res.text(), "");
});

Deno.test("unhashed static files get a short cache", async () => {
  const res = await fetch(url("/robots.txt"));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "text/plain; charset=utf-8");
  assert.equal(res.headers.get("cache-control"), "public, max-age=300");
  assert.equal(await res.text(), await Deno.readTextFile("static/robots.txt"));
  const svg = await fetch(url("/favicon.svg"));
  assert.equal(svg.headers.get("content-type"), "image/svg+xml");
  await svg.body?.cancel();
});

Deno.test("source maps, compressed copies, the manifest and directories are not served", async () => {
  for (
    const path of [
      `${manifest.script}.map`,
      `${manifest.script}.br`,
      "/build/.manifest.json",
      "/build/",
      "/build",
    ]
  ) {
    const res = await fetch(url(path));
    assert.equal(res.status, 404, path);
    await res.body?.cancel();
  }
});

// Raw HTTP, because fetch and URL normalise `..` and backslashes before sending.
async function rawGet(target: string): Promise<{ status: number; text: string }> {
  const { port } = new URL(server.url);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: Number(port) });
  const request = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
  await conn.write(new TextEncoder().encode(request));
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of conn.readable) text += decoder.decode(chunk, { stream: true });
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  return { status, text };
}

Deno.test("no path leaves static/: every traversal form is a 404 without file bytes", async () => {
  const denoJson = await Deno.readTextFile("deno.json");
  const targets = [
    "/../deno.json",
    "/build/../../deno.json",
    "/%2e%2e/deno.json",
    "/%2E%2E/%2e%2e/deno.json",
    "/..%2fdeno.json",
    "/build%2f..%2f..%2fdeno.json",
    "/..%5cdeno.json",
    "/..\\deno.json",
    "/build\\..\\..\\deno.json",
    "/robots.txt%00",
    "/deno.json%00.txt",
    "//work/main/deno.json",
    "/%2fetc%2fpasswd",
    "/etc/passwd",
    "/main.ts",
    "/server/config.ts",
    "/.git/config",
    "/static/robots.txt",
  ];
  for (const target of targets) {
    const { status, text } = await rawGet(target);
    // Hyper itself may refuse some of these as malformed (400); both keep the file safe.
    assert.ok(status === 404 || status === 400, `${target}: ${status}`);
    assert.ok(!text.includes('"nodeModulesDir"'), `${target} leaked deno.json`);
    assert.ok(!text.includes("root:x:0:0"), `${target} leaked /etc/passwd`);
  }
  void denoJson;
});

Deno.test("unknown path: 404 HTML page", async () => {
  const res = await fetch(url("/no/such/page"));
  assert.equal(res.status, 404);
  assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
  assert.match(await res.text(), /<!doctype html>.*Not found/s);
});

Deno.test("wrong method on a known path: 405 with Allow", async () => {
  for (
    const [method, path, allow] of [
      ["POST", "/", "GET, HEAD"],
      ["DELETE", "/healthz", "GET, HEAD"],
      ["GET", "/monitoring", "POST"],
      ["PUT", "/robots.txt", "GET, HEAD"],
      ["POST", manifest.script, "GET, HEAD"],
    ]
  ) {
    const res = await fetch(url(path), { method });
    assert.equal(res.status, 405, `${method} ${path}`);
    assert.equal(res.headers.get("allow"), allow);
    await res.body?.cancel();
  }
});

Deno.test("GET /healthz: status and release", async () => {
  const res = await fetch(url("/healthz"));
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "application/json");
  assert.deepEqual(await res.json(), { status: "ok", release: manifest.buildId });
});

Deno.test("start-up prints the URL and says monitoring is off", () => {
  assert.match(server.output(), /^Listening on http:\/\/127\.0\.0\.1:\d+\/ /m);
  assert.match(server.output(), /Monitoring is off: set SENTRY_DSN/);
});

Deno.test("an invalid setting stops start-up with one line and a non-zero exit", async () => {
  for (
    const [env, line] of [
      [{ PORT: "abc" }, 'error: PORT: expected an integer from 0 to 65535, got "abc"'],
      [{ SENTRY_DSN: "nope" }, "error: SENTRY_DSN: expected a Sentry DSN"],
      [{ TRUST_PROXY: "perhaps" }, 'error: TRUST_PROXY: expected true or false, got "perhaps"'],
    ] as const
  ) {
    const { code, output } = await runServerToExit(env);
    assert.notEqual(code, 0);
    assert.equal(output.trim().split("\n").length, 1, output);
    assert.ok(output.startsWith(line), output);
  }
});

Deno.test("SIGTERM and SIGINT let an in-flight request finish, then exit 0", async () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    // The ingest holds its answer, so the tunnel request is in flight when the signal lands.
    await using ingest = startFakeIngest({ delayMs: 700 });
    const dsn = ingest.dsn("abc", "1");
    const own = await startServer({ SENTRY_DSN: dsn });
    const envelope = `${JSON.stringify({ dsn })}\n{"type":"event"}\n{}`;
    const inFlight = fetch(new URL("/monitoring", own.url), { method: "POST", body: envelope });
    await ingest.waitFor(1, "complete");
    own.process.kill(signal);
    const res = await inFlight;
    assert.equal(res.status, 200, "the in-flight request got the ingest's answer");
    await res.body?.cancel();
    const status = await own.stop(signal);
    assert.equal(status.code, 0, own.output());
    await assert.rejects(fetch(own.url), "after shutdown, connections are refused");
  }
});

Deno.test("security headers on every kind of response", async () => {
  const requests: [string, RequestInit][] = [
    ["/", {}],
    [manifest.script, {}],
    ["/robots.txt", {}],
    ["/healthz", {}],
    ["/nope", {}],
    ["/", { method: "DELETE" }],
    ["/monitoring", { method: "POST", body: "{}\n" }],
  ];
  for (const [path, init] of requests) {
    const res = await fetch(url(path), init);
    await res.body?.cancel();
    const h = res.headers;
    assert.equal(h.get("x-content-type-options"), "nosniff", path);
    assert.equal(h.get("referrer-policy"), "strict-origin-when-cross-origin", path);
    assert.equal(h.get("cross-origin-opener-policy"), "same-origin", path);
    assert.match(h.get("permissions-policy") ?? "", /camera=\(\)/, path);
    assert.equal(h.get("strict-transport-security"), null, "plain HTTP gets no HSTS");
    assert.match(h.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/, path);
  }
});

Deno.test("every HTML response has a CSP; the page's nonce is fresh and on every script", async () => {
  const nonces = new Set<string>();
  for (let i = 0; i < 20; i++) {
    const res = await fetch(url("/"));
    const html = await res.text();
    const csp = res.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce && atob(nonce).length >= 16, "a nonce of 128 bits or more");
    assert.match(csp, /script-src 'nonce-[^']+' 'strict-dynamic'/);
    for (const d of ["object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'"]) {
      assert.ok(csp.includes(d), d);
    }
    assert.ok(csp.includes("form-action 'self'") && csp.includes("connect-src 'self'"));
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    assert.ok(scripts.length >= 2);
    for (const tag of [...scripts, ...(html.match(/<link rel="modulepreload"[^>]*>/g) ?? [])]) {
      assert.ok(tag.includes(`nonce="${nonce}"`), tag);
    }
    nonces.add(nonce);
  }
  assert.equal(nonces.size, 20, "no nonce is ever reused");
  // The app's not-found page is the app (same shell, same policy); the small error pages run nothing.
  const notFoundPage = await fetch(url("/nope"));
  await notFoundPage.body?.cancel();
  assert.match(notFoundPage.headers.get("content-security-policy") ?? "", /script-src 'nonce-/);
  const errorPage = await fetch(url("/"), { method: "POST" });
  await errorPage.body?.cancel();
  assert.match(errorPage.headers.get("content-security-policy") ?? "", /default-src 'none'/);
});

Deno.test("oversized URLs and header sets get 414 and 431, never a 500", async () => {
  const long = await fetch(url(`/?q=${"a".repeat(9000)}`));
  assert.equal(long.status, 414);
  await long.body?.cancel();
  const headers = new Headers();
  for (let i = 0; i < 20; i++) headers.set(`x-filler-${i}`, "v".repeat(2000));
  const big = await fetch(url("/"), { headers });
  assert.equal(big.status, 431);
  await big.body?.cancel();
});

Deno.test("HEAD works wherever GET does", async () => {
  for (const path of ["/", "/healthz", "/robots.txt", manifest.script, "/nope"]) {
    const get = await fetch(url(path));
    await get.body?.cancel();
    const head = await fetch(url(path), { method: "HEAD" });
    assert.equal(head.status, get.status, path);
    assert.equal(head.headers.get("content-type"), get.headers.get("content-type"), path);
    assert.equal(await head.text(), "");
  }
});

Deno.test("one JSON log line per request, with the echoed X-Request-Id", async () => {
  const res = await fetch(url("/healthz?token=secret"), { headers: { "x-request-id": "req-42" } });
  await res.body?.cancel();
  assert.equal(res.headers.get("x-request-id"), "req-42");
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 100 && !line; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    line = server.output().split("\n").filter((l) =>
      l.includes('"req-42"')
    ).map((l) => JSON.parse(l))[0];
  }
  assert.ok(line, "the request was logged");
  assert.equal(line.method, "GET");
  assert.equal(line.path, "/healthz", "the query string is not logged");
  assert.equal(line.status, 200);
  assert.equal(typeof line.durationMs, "number");
  assert.equal(typeof line.bytes, "number");
  assert.match(String(line.time), /^\d{4}-\d\d-\d\dT/);
});

Deno.test("LOG_FORMAT=text logs plain lines", async () => {
  const own = await startServer({ LOG_FORMAT: "text" });
  try {
    const res = await fetch(new URL("/healthz", own.url), { headers: { "x-request-id": "t-1" } });
    await res.body?.cancel();
    let found = false;
    for (let i = 0; i < 100 && !found; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      found = /^\S+ GET "\/healthz" 200 [\d.]+ms \d+B t-1$/m.test(own.output());
    }
    assert.ok(found, own.output());
  } finally {
    await own.stop();
  }
});

Deno.test("the start task serves with only the permissions it needs", () => {
  // The task runs a launcher that validates the configuration and starts main.ts with
  // permissions computed from it; the launcher itself may only read env and run the server.
  const launcher = startTaskArgs();
  assert.equal(launcher.at(-1), "server/tasks/start.ts");
  const launcherFlags = launcher.filter((a) => a.startsWith("-")).sort();
  assert.deepEqual(launcherFlags, [`--allow-env=${SERVER_ENV_VARIABLES.join(",")}`, "--allow-run"]);
  assert.equal(startTaskEnv().NODE_ENV, "production");

  const config = loadConfig({
    PORT: "8000",
    SENTRY_DSN: "https://key@o1.ingest.sentry.io/5",
    TUNNEL_ALLOWED_DSNS: "http://k2@10.0.0.7:9000/sentry/6",
  });
  assert.deepEqual(servingArgs(config), [
    "run",
    // The own DSN's host without a port: @sentry/deno checks exactly that (see permissions.ts).
    "--allow-net=0.0.0.0:8000,o1.ingest.sentry.io,10.0.0.7:9000",
    "--allow-read=static",
    `--allow-env=${["NODE_ENV", ...CONFIG_VARIABLES].join(",")}`,
    "main.ts",
    "--until-stdin-closes",
  ]);
  assert.equal(servingArgs(loadConfig({ HOST: "::1", PORT: "0" }))[1], "--allow-net=[::1]:0");
});

Deno.test("the server process started by the task holds exactly those permissions", async () => {
  // The launcher's one child is the server: its flags are the computed ones, nothing more.
  const own = await startServer({ SENTRY_DSN: "http://k@127.0.0.1:9/1" });
  try {
    // Deno guards /proc behind --allow-all; ps reads it for us.
    const ps = await new Deno.Command("ps", {
      args: ["-o", "args=", "--ppid", String(own.process.pid)],
    }).output();
    const lines = new TextDecoder().decode(ps.stdout).trim().split("\n");
    assert.equal(lines.length, 1, lines.join("\n"));
    const cmdline = lines[0].split(/\s+/);
    const flags = cmdline.filter((a) => a.startsWith("--"));
    assert.deepEqual(
      flags,
      servingArgs(loadConfig({
        PORT: "0",
        HOST: "127.0.0.1",
        SENTRY_DSN: "http://k@127.0.0.1:9/1",
      })).filter((a) => a.startsWith("--")),
    );
  } finally {
    await own.stop();
  }
});

Deno.test("a missing permission stops start-up with one line naming it", async () => {
  const cases: [string[], string][] = [
    [["--allow-net", "--allow-env"], "error: missing permission --allow-read=static"],
    [["--allow-read=static", "--allow-env"], "error: missing permission --allow-net=127.0.0.1"],
    [
      ["--allow-net", "--allow-read=static", "--allow-env=PORT"],
      "error: missing permission --allow-env=",
    ],
  ];
  for (const [flags, line] of cases) {
    const { code, output } = await runServerToExit({}, ["run", ...flags, "main.ts"]);
    assert.equal(code, 1, output);
    assert.equal(output.trim().split("\n").length, 1, output);
    assert.ok(output.startsWith(line), output);
  }
});

Deno.test("listen failures a user causes stop start-up with one line and exit 1", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const cases: [Record<string, string>, string][] = [
      [{ HOST: "999.1.1.1" }, 'error: HOST: cannot resolve "999.1.1.1"'],
      // TEST-NET-1 (RFC 5737): never an address of this machine.
      [{ HOST: "192.0.2.1" }, "error: HOST: 192.0.2.1 is not an address of this machine"],
      [
        { HOST: "a b" },
        'error: HOST: expected an IP address or a host name of this machine, got "a b"',
      ],
      [{ PORT: String(taken.addr.port) }, `error: PORT: ${taken.addr.port} is already in use`],
    ];
    for (const [env, line] of cases) {
      const { code, output } = await runServerToExit(env);
      assert.equal(code, 1, output);
      assert.equal(output.trim().split("\n").length, 1, output);
      assert.ok(output.startsWith(line), output);
    }
  } finally {
    taken.close();
  }
});

const isRoot = Deno.uid() === 0;
const hasSetpriv = await new Deno.Command("setpriv", { args: ["--version"] }).output()
  .then((r) => r.success, () => false);

Deno.test({
  name: "a port the system refuses (PORT=80 without root) stops start-up with one line",
  // Only root can drop to another user for this; any other user is refused port 80 already.
  ignore: !isRoot || !hasSetpriv,
  async fn() {
    const env = { HOST: "127.0.0.1", PORT: "80" };
    // main.ts with the launcher's flags, as `nobody`: the launcher could not start Deno from
    // root's home as another user, and the refusal comes from the system, not Deno.
    const result = await new Deno.Command("setpriv", {
      args: [
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        Deno.execPath(),
        ...servingArgs(loadConfig(env)).slice(0, -1),
      ],
      env: { ...inheritedEnv(), ...startTaskEnv(), ...env, NO_COLOR: "1" },
      clearEnv: true,
      stdin: "null",
    }).output();
    const code = result.code;
    const output = new TextDecoder().decode(result.stdout) +
      new TextDecoder().decode(result.stderr);
    assert.equal(code, 1, output);
    assert.equal(output.trim().split("\n").length, 1, output);
    assert.ok(
      output.startsWith("error: PORT: the system does not allow this process to listen on port 80"),
      output,
    );
  },
});

// Whether this machine has an IPv6 loopback, asked of a child process: these tests may only
// reach 127.0.0.1.
const hasIpv6Loopback = await new Deno.Command(Deno.execPath(), {
  args: ["eval", "Deno.listen({ hostname: '::1', port: 0 }).close()"],
  stdout: "null",
  stderr: "null",
}).output().then((r) => r.success);

Deno.test({
  name: "HOST=::1 prints its URL with brackets, and that URL answers",
  ignore: !hasIpv6Loopback,
}, async () => {
  const child = new Deno.Command(Deno.execPath(), {
    args: startTaskArgs(),
    env: { ...inheritedEnv(), ...startTaskEnv(), HOST: "::1", PORT: "0", NO_COLOR: "1" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let onText = () => {};
  const { text, done } = collectOutput(child, () => onText());
  try {
    const url = await new Promise<string>((resolve, reject) => {
      onText = () => {
        const match = /Listening on (\S+)/.exec(text());
        if (match) resolve(match[1]);
      };
      child.status.then(() => reject(new Error(`exited:\n${text()}`)));
    });
    assert.match(url, /^http:\/\/\[::1\]:\d+\/$/);
    // Loopback over IPv6; the test's --allow-net covers 127.0.0.1 only, so ask curl.
    const curl = await new Deno.Command("curl", {
      args: ["-sS", "--max-time", "10", "-o", "/dev/null", "-w", "%{http_code}", `${url}healthz`],
    }).output();
    assert.equal(new TextDecoder().decode(curl.stdout), "200");
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await done;
  }
});

Deno.test("a valid https DSN starts without the Sentry SDK's permission warning", async () => {
  // `.invalid` never resolves, and nothing is sent before an event: no traffic leaves.
  const own = await startServer({ SENTRY_DSN: "https://key@o1.ingest.sentry.invalid/5" });
  try {
    const res = await fetch(new URL("/healthz", own.url));
    assert.equal(res.status, 200);
    await res.body?.cancel();
  } finally {
    await own.stop();
  }
  assert.doesNotMatch(own.output(), /requires 'net' permission/);
  assert.doesNotMatch(own.output(), /--allow-net/);
});
