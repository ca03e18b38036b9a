/**
 * What the server's Sentry set-up does for the whole process: errors outside any handler, and
 * what every event carries. In a subprocess each, since `Sentry.init` changes the process.
 */
import assert from "node:assert/strict";

const MONITORING_MODULE = new URL("../../../server/monitoring/sentry.ts", import.meta.url).href;
const CONFIG_MODULE = new URL("../../../server/lifecycle/config.ts", import.meta.url).href;

// A script that starts monitoring with a transport printing each envelope on stdout, then
// fails the way `kind` says, outside any handler.
function failingScript(
  kind: "rejection" | "throw",
  thrown = 'new Error("nobody caught this")',
): string {
  return `
${SCRIPT_START}
${kind === "rejection" ? `Promise.reject(${thrown});` : `setTimeout(() => { throw ${thrown}; });`}
`;
}

const SCRIPT_START = `
import { createTransport } from "@sentry/deno";
import { startMonitoring } from ${JSON.stringify(MONITORING_MODULE)};
import { loadConfig } from ${JSON.stringify(CONFIG_MODULE)};
const config = loadConfig({
  SENTRY_DSN: "http://key@127.0.0.1:9/1", SENTRY_ENVIRONMENT: "test", SENTRY_TRACES_SAMPLE_RATE: "0",
});
const monitoring = startMonitoring(config, "r1", {
  transport: (options) => createTransport(options, async ({ body }) => {
    console.log(typeof body === "string" ? body : new TextDecoder().decode(body));
    return { statusCode: 200 };
  }),
});
`;

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

Deno.test("events carry Deno's SDK name, runtime and contexts, and frames relative to the app", async () => {
  const { code, events } = await runScript(`${SCRIPT_START}
monitoring.captureError(new Error("with context"));
await monitoring.flush(1000);
`);
  assert.equal(code, 0);
  const [event] = events;
  assert.equal(event.sdk.name, "sentry.javascript.deno");
  assert.equal(event.platform, "javascript");
  assert.equal(event.contexts.runtime.name, "deno");
  assert.equal(event.contexts.runtime.version, Deno.version.deno);
  assert.equal(event.contexts.os.name, "Linux");
  assert.equal(event.contexts.device.arch, Deno.build.arch);
  assert.equal(event.environment, "test");
  assert.equal(event.release, "r1");
  // The script lives outside the app: its frame keeps its own path, and is the last one.
  const frames = event.exception.values[0].stacktrace.frames;
  assert.match(frames.at(-1).filename, /script\.ts$/);
});
