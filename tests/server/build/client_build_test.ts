import assert from "node:assert/strict";
import * as esbuild from "esbuild";
import type { Metafile } from "esbuild";
import { manifestFromMetafile } from "../../../server/build/client_build.ts";
import { sentryImportCheck, sentryProductsApart } from "../../../server/build/sentry_plugin.ts";

const metafile = {
  outputs: {
    "static/build/main-AAAA.js": {
      entryPoint: "client/main.tsx",
      cssBundle: "static/build/main-CCCC.css",
      imports: [
        { path: "static/build/chunks/chunk-BBBB.js", kind: "import-statement" },
        { path: "static/build/chunks/lazy-DDDD.js", kind: "dynamic-import" },
        { path: "https://cdn.example/x.js", kind: "import-statement", external: true },
      ],
    },
    "static/build/chunks/chunk-BBBB.js": {
      imports: [{ path: "static/build/chunks/deep-EEEE.js", kind: "import-statement" }],
    },
    "static/build/chunks/deep-EEEE.js": { imports: [] },
    "static/build/chunks/lazy-DDDD.js": { imports: [] },
    "static/build/main-CCCC.css": { imports: [] },
    "static/build/home-GGGG.js": {
      entryPoint: "client/pages/home.tsx",
      cssBundle: "static/build/home-HHHH.css",
      imports: [
        { path: "static/build/chunks/chunk-BBBB.js", kind: "import-statement" },
        { path: "static/build/chunks/home-only-IIII.js", kind: "import-statement" },
      ],
    },
    "static/build/chunks/home-only-IIII.js": {
      imports: [{ path: "static/build/chunks/deep-EEEE.js", kind: "import-statement" }],
    },
    "static/build/replay-worker-FFFF.js.map": { imports: [] },
    "static/build/replay-worker-FFFF.js": {
      entryPoint: "node_modules/@sentry/replay/build/npm/esm/worker-bundler.js",
      imports: [],
    },
  },
} as unknown as Metafile;

Deno.test("manifestFromMetafile: entry, styles, static imports, Replay's worker, each page's chunk", () => {
  assert.deepEqual(manifestFromMetafile(metafile, "b1", "h1"), {
    buildId: "b1",
    inputHash: "h1",
    script: "/build/main-AAAA.js",
    preload: ["/build/chunks/chunk-BBBB.js", "/build/chunks/deep-EEEE.js"],
    styles: ["/build/main-CCCC.css"],
    replayWorker: "/build/replay-worker-FFFF.js",
    // What the shell loads already is not preloaded again for the page.
    pages: {
      "client/pages/home.tsx": {
        script: "/build/home-GGGG.js",
        preload: ["/build/chunks/home-only-IIII.js"],
        styles: ["/build/home-HHHH.css"],
      },
    },
  });
});

// esbuild.stop() kills its service without waiting for it to exit.
const ESBUILD_SERVICE = { sanitizeResources: false };

Deno.test(
  "the build refuses app code that imports @sentry/* itself, naming client/sentry.ts",
  ESBUILD_SERVICE,
  async () => {
    const root = await Deno.makeTempDir();
    const write = async (path: string, code: string) => {
      await Deno.mkdir(`${root}/${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
      await Deno.writeTextFile(`${root}/${path}`, code);
    };
    await write(
      "client/pages/checkout.ts",
      'import { logger } from "@sentry/react";\nlogger.info("x");\n',
    );
    await write("client/monitoring.ts", 'import { init } from "@sentry/react";\ninit({});\n');
    await write(
      "client/sentry_features/replay.ts",
      'export { replayIntegration } from "@sentry/react";\n',
    );
    await write(
      "client/typed.ts",
      'import type { User } from "@sentry/react";\nexport const u: User = {};\n',
    );
    // The SDK itself is not what this build is about: whatever passes the check is left external.
    const sdkExternal: esbuild.Plugin = {
      name: "sdk-external",
      setup: (b) => b.onResolve({ filter: /^@sentry\// }, ({ path }) => ({ path, external: true })),
    };
    const build = (entry: string) =>
      esbuild.build({
        entryPoints: [`${root}/${entry}`],
        bundle: true,
        format: "esm",
        write: false,
        logLevel: "silent",
        plugins: [sentryImportCheck(root), sdkExternal],
      });
    try {
      await assert.rejects(build("client/pages/checkout.ts"), (error: Error) => {
        assert.match(
          error.message,
          /client\/pages\/checkout\.ts imports @sentry\/react: import client\/sentry\.ts instead/,
        );
        return true;
      });
      for (const allowed of ["client/monitoring.ts", "client/sentry_features/replay.ts"]) {
        assert.equal((await build(allowed)).errors.length, 0, allowed);
      }
      assert.equal((await build("client/typed.ts")).errors.length, 0, "a type import is erased");
    } finally {
      await esbuild.stop();
      await Deno.remove(root, { recursive: true });
    }
  },
);

Deno.test(
  "the build refuses a product used through @sentry/react, naming the SENTRY_* settings",
  ESBUILD_SERVICE,
  async () => {
    // The real SDK, resolved from the project, as client/sentry_options.ts would import it.
    const build = (contents: string) =>
      esbuild.build({
        stdin: { contents, resolveDir: Deno.cwd(), loader: "ts" },
        bundle: true,
        format: "esm",
        write: false,
        logLevel: "silent",
        plugins: [sentryProductsApart()],
      });
    try {
      const init = await build('import { init } from "@sentry/react";\ninit({});\n');
      assert.deepEqual(init.errors, []);
      // Unused, the products it leaves out are not imported either.
      assert.deepEqual(Object.values(init.metafile!.outputs).flatMap((out) => out.imports), []);
      const uses = 'import { logger, replayIntegration } from "@sentry/react";\n' +
        'export const replay = replayIntegration();\nlogger.info("x");\n';
      await assert.rejects(build(uses), (error: esbuild.BuildFailure) => {
        assert.deepEqual(error.errors.map((e) => e.text), [
          "client code uses ./logs/public-api.js, @sentry/replay through @sentry/react, which " +
          "would load it on every page: Replay, Feedback, profiling and logs load after hydration " +
          "with their SENTRY_* settings (options in client/sentry_options.ts)",
        ]);
        return true;
      });
    } finally {
      await esbuild.stop();
    }
  },
);
