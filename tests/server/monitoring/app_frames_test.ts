import assert from "node:assert/strict";
import type { Event } from "@sentry/core";
import {
  appFramesIntegration,
  relativeToRoot,
  rewriteFrames,
} from "../../../server/monitoring/app_frames.ts";

Deno.test("relativeToRoot: paths and file URLs inside the root become app:///, others stay", () => {
  assert.equal(relativeToRoot("/srv/app/server/app.ts", "/srv/app/"), "app:///server/app.ts");
  assert.equal(relativeToRoot("file:///srv/app/main.ts", "/srv/app/"), "app:///main.ts");
  assert.equal(relativeToRoot("/srv/application/x.ts", "/srv/app/"), "/srv/application/x.ts");
  assert.equal(
    relativeToRoot("ext:deno_http/00_serve.ts", "/srv/app/"),
    "ext:deno_http/00_serve.ts",
  );
  assert.equal(relativeToRoot("", "/srv/app/"), "");
});

Deno.test("rewriteFrames: every frame of every exception and thread, the same on any host", () => {
  const eventOn = (root: string): Event => ({
    exception: {
      values: [
        {
          stacktrace: {
            frames: [{ filename: `${root}server/http/app.ts`, abs_path: `${root}x.ts` }],
          },
        },
        { stacktrace: { frames: [{ filename: `file://${root}server/page/handler.ts` }, {}] } },
        {},
      ],
    },
    threads: { values: [{ stacktrace: { frames: [{ filename: `${root}main.ts` }] } }] },
  });
  const here = rewriteFrames(eventOn("/home/a/app/"), "/home/a/app/");
  const there = appFramesIntegration("file:///srv/b%20c/").processEvent!(
    eventOn("/srv/b c/"),
    {},
    undefined as never,
  );
  assert.deepEqual(here, there);
  assert.equal(
    here.exception?.values?.[1].stacktrace?.frames?.[0].filename,
    "app:///server/page/handler.ts",
  );
  assert.equal(here.threads?.values?.[0].stacktrace?.frames?.[0].filename, "app:///main.ts");
});
