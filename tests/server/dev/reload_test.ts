/**
 * Live reload's pieces without a network: the status file, its watcher, the event stream, and
 * how esbuild's errors are passed on.
 */
import assert from "node:assert/strict";
import { toBuildError } from "../../../server/dev/reload.ts";
import {
  type BuildStatus,
  readBuildStatus,
  ReloadChannel,
  watchBuildStatus,
  writeBuildStatus,
} from "../../../server/dev/reload.ts";

const BROKEN: BuildStatus = {
  seq: 2,
  ok: false,
  errors: [{ text: 'Unexpected ";"', file: "client/main.tsx", line: 3, column: 9 }],
};

/** Read a stream's text until `until` matches (or it ends). */
async function readUntil(stream: ReadableStream<Uint8Array>, until: RegExp): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!until.test(text)) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

Deno.test("the status file round-trips; a missing or foreign file reads as null", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/.dev-status.json`;
    assert.equal(await readBuildStatus(path), null);
    await writeBuildStatus(BROKEN, path);
    assert.deepEqual(await readBuildStatus(path), BROKEN);
    await Deno.writeTextFile(path, '{"seq":"x"}');
    assert.equal(await readBuildStatus(path), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("watchBuildStatus reports each newer status once, in order", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/.dev-status.json`;
  const seen: number[] = [];
  const arrived = Promise.withResolvers<void>();
  const stop = watchBuildStatus((status) => {
    seen.push(status.seq);
    if (status.seq === 3) arrived.resolve();
  }, { path, lastSeq: 1 });
  try {
    await writeBuildStatus({ seq: 1, ok: true, buildId: "old" }, path); // not newer: ignored
    await writeBuildStatus(BROKEN, path);
    await new Promise((r) => setTimeout(r, 100));
    await writeBuildStatus({ seq: 3, ok: true, buildId: "new" }, path);
    await arrived.promise;
    assert.deepEqual(seen, [2, 3]);
  } finally {
    stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ReloadChannel: hello on connect, then reload and build-error as builds finish", async () => {
  const channel = new ReloadChannel({ status: null, buildId: "b1" });
  const res = channel.handler();
  assert.equal(res.headers.get("content-type"), "text/event-stream");
  const reading = readUntil(res.body!, /event: build-error/);
  channel.publish({ seq: 1, ok: true, buildId: "b2" });
  channel.publish(BROKEN);
  const text = await reading;
  assert.match(text, /^retry: \d+\n\n/);
  assert.match(text, /event: hello\ndata: \{"session":"[0-9a-f-]{36}","buildId":"b1"\}\n\n/);
  assert.match(text, /event: reload\ndata: \{"buildId":"b2"\}\n\n/);
  assert.match(text, /event: build-error\ndata: \{"errors":\[\{"text":"Unexpected \\";\\"",/);

  // A page that connects while the build is broken hears about it at once.
  const late = await readUntil(channel.handler().body!, /event: build-error/);
  assert.match(late, /"buildId":"b2"[\s\S]*event: build-error/);
  channel.close();
});

Deno.test("ReloadChannel.close ends every open stream", async () => {
  const channel = new ReloadChannel({ status: null, buildId: "b1" });
  const streams = [channel.handler().body!, channel.handler().body!];
  channel.close();
  for (const stream of streams) {
    const text = await readUntil(stream, /(?!)/); // never matches: reads to the end
    assert.match(text, /event: hello/);
  }
});

Deno.test("toBuildError keeps file, line and source line, with 1-based columns", () => {
  assert.deepEqual(
    toBuildError({
      id: "",
      pluginName: "",
      text: 'Expected ";" but found "x"',
      location: {
        file: "client/App.tsx",
        namespace: "file",
        line: 4,
        column: 0,
        length: 1,
        lineText: "x y",
        suggestion: "",
      },
      notes: [],
      detail: undefined,
    }),
    {
      text: 'Expected ";" but found "x"',
      file: "client/App.tsx",
      line: 4,
      column: 1,
      lineText: "x y",
    },
  );
  assert.deepEqual(
    toBuildError({
      id: "",
      pluginName: "",
      text: "no location",
      location: null,
      notes: [],
      detail: undefined,
    }),
    { text: "no location" },
  );
});
