import assert from "node:assert/strict";
import { captureException, createTransport, flush } from "@sentry/core";
import { startSentryClient } from "../../../server/monitoring/sentry_client.ts";

const CLIENT_MODULE = new URL("../../../server/monitoring/sentry_client.ts", import.meta.url).href;

// A script that starts the client with a transport printing each envelope on stdout, then
// fails the way `kind` says, outside any handler.
function failingScript(
  kind: "rejection" | "throw",
  thrown = 'new Error("nobody caught this")',
): string {
  return `
import { createTransport } from "@sentry/core";
import { startSentryClient } from ${JSON.stringify(CLIENT_MODULE)};
startSentryClient({
  dsn: "http://key@127.0.0.1:9/1", environment: "test", release: "r1", tracesSampleRate: 0,
  transport: (options) => createTransport(options, async ({ body }) => {
    console.log(typeof body === "string" ? body : new TextDecoder().decode(body));
    return { statusCode: 200 };
  }),
});
${kind === "rejection" ? `Promise.reject(${thrown});` : `setTimeout(() => { throw ${thrown}; });`}
`;
}

async function runScript(source: string) {
  const dir = await Deno.makeTempDir();
  try {
    const file = `${dir}/script.ts`;
    await Deno.writeTextFile(file, source);
    const { code, stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-read", "--allow-env", `--config=${Deno.cwd()}/deno.json`, file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const lines = new TextDecoder().decode(stdout).split("\n").filter((l) => l.startsWith("{"));
    const events = lines.filter((l) => l.includes('"exception"')).map((l) => JSON.parse(l));
    return { code, events };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (
  const [kind, mechanism] of [
    ["rejection", "auto.deno.global_handlers.unhandledrejection"],
    ["throw", "auto.deno.global_handlers.error"],
  ] as const
) {
  Deno.test(`an uncaught ${kind} outside any handler is sent as fatal, then ends the process`, async () => {
    const { code, events } = await runScript(failingScript(kind));
    assert.notEqual(code, 0);
    assert.equal(events.length, 1);
    const [event] = events;
    assert.equal(event.level, "fatal");
    const exception = event.exception.values.at(-1);
    assert.equal(exception.value, "nobody caught this");
    assert.deepEqual(exception.mechanism, { type: mechanism, handled: false });
  });
}

Deno.test("an uncaught error the SDK cannot read is sent as fatal (a stand-in, not the getter's error), then ends the process", async () => {
  const unreadable =
    `Object.defineProperty(new Error("x"), "stack", { get() { throw new Error("boom"); } })`;
  for (
    const [thrown, value] of [
      [unreadable, /^a thrown value that could not be read$/],
      ['Symbol("odd")', /Symbol\(odd\)/],
      ['Object.assign(new Error("odd stack"), { stack: 42 })', /^odd stack$/],
      ["function thrown() {}", /^a thrown function$/],
    ] as const
  ) {
    const { code, events } = await runScript(failingScript("rejection", thrown));
    assert.notEqual(code, 0);
    assert.equal(events.length, 1, thrown);
    assert.equal(events[0].level, "fatal");
    // Not the getter's own error, reported in its place.
    assert.match(events[0].exception.values.at(-1).value, value);
  }
});

Deno.test("events carry Deno's SDK name, runtime and contexts", async () => {
  const sent: string[] = [];
  const client = startSentryClient({
    dsn: "http://key@127.0.0.1:9/1",
    environment: "test",
    release: "r1",
    tracesSampleRate: 0,
    transport: (options) =>
      createTransport(options, ({ body }) => {
        sent.push(typeof body === "string" ? body : new TextDecoder().decode(body));
        return Promise.resolve({ statusCode: 200 });
      }),
  });
  try {
    captureException(new Error("with context"));
    await flush(1000);
    const event = JSON.parse(sent.join("\n").split("\n").find((l) => l.includes('"exception"'))!);
    assert.equal(event.sdk.name, "sentry.javascript.deno");
    assert.equal(event.platform, "javascript");
    assert.equal(event.contexts.runtime.name, "deno");
    assert.equal(event.contexts.runtime.version, Deno.version.deno);
    assert.equal(event.contexts.os.name, "Linux");
    assert.equal(event.contexts.device.arch, Deno.build.arch);
    assert.equal(event.environment, "test");
    assert.equal(event.release, "r1");
    // Deno's stack lines parsed into frames, innermost last.
    assert.match(event.exception.values[0].stacktrace.frames.at(-1).filename, /sentry_client_test/);
  } finally {
    await client.close();
  }
});
