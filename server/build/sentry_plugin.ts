/**
 * The client build's Sentry parts: app code reports through `client/sentry.ts`, never the SDK
 * itself; each of Sentry's optional products is a chunk of its own, fetched only while its setting
 * is on; Replay's compression worker is a file of the build.
 */
import type * as esbuild from "esbuild";
import { dirname } from "node:path";

/** Replay's compression worker, an entry point: the SDK's inlined copy runs from a `blob:` URL,
 * which the CSP refuses. */
export const REPLAY_WORKER = "@sentry/replay/worker-bundler";

// The client modules that may import the SDK; the rest use client/sentry.ts, which loads it lazily.
const SDK_IMPORTERS = /^client\/(monitoring\.ts|sentry_options\.ts|sentry_features\/)/;
const MONITORING = "client/monitoring.ts";
const FEATURE_MODULE = /^client\/sentry_features\/(\w+)\.ts$/;
// esbuild splits chunks by file, and Sentry's browser barrel re-exports every product: whatever
// imports it would put them all in monitoring's chunk. So the barrel loses these lines, and each
// `client/sentry_features/<name>.ts` gets, as its `@sentry/react`, the barrel plus its own lines.
const BARREL = /\/@sentry\/browser\/build\/npm\/esm\/\w+\/index\.js$/;
// Core's client imports logs/internal.js (for its flush), which would put the whole logger in the
// SDK's chunk: the logs chunk gets copies of it and of the logger's API instead. They keep no state
// of their own (the buffer is a global singleton), so the copies and the original act as one.
const LOGGER = "logs/public-api.js";
const LOGS_COPY = "sentry-logs:";
const FEATURE_SOURCES = new Map([
  ["replay", /^@sentry\/replay(-canvas)?$/],
  ["feedback", /^(@sentry\/feedback|\.\/feedback\w*\.js)$/],
  ["profiling", /^\.\/profiling\//],
]);

/** The barrel's re-exports (one a line) of `feature`, or without a feature those of none. */
function barrelLines(source: string, feature?: string): string {
  const featureOf = (line: string) => {
    const from = /^export .* from '([^']+)';$/.exec(line)?.[1] ?? "";
    return [...FEATURE_SOURCES].find(([, sources]) => sources.test(from))?.[0];
  };
  return source.split("\n").filter((line) => featureOf(line) === feature).join("\n");
}

// A path relative to the project, or "" outside it.
const inProject = (root: string, path: string) =>
  path.startsWith(`${root}/`) ? path.slice(root.length + 1) : "";

/** Fail the build when app code imports `@sentry/*` itself instead of `client/sentry.ts`. */
export function sentryImportCheck(root: string): esbuild.Plugin {
  return {
    name: "sentry-import-check",
    setup(build) {
      build.onResolve({ filter: /^@sentry\// }, ({ importer, path }) => {
        const from = inProject(root, importer);
        if (!from.startsWith("client/") || SDK_IMPORTERS.test(from)) return undefined;
        const text = `${from} imports ${path}: import client/sentry.ts instead, which loads ` +
          `the SDK after hydration (importing it puts all of it before)`;
        return { errors: [{ text }] };
      });
    },
  };
}

/** Sentry's products in chunks of their own, and Replay's worker as an entry point. */
export function sentryChunks(root: string): esbuild.Plugin {
  return {
    name: "sentry-chunks",
    setup(build) {
      const resolve = (path: string, resolveDir: string) =>
        build.resolve(path, { kind: "import-statement", resolveDir });
      // The build may read only the project (`--allow-read=.`), whose node_modules can be a link
      // (a test's copy of the project): a package's file is read through it.
      const read = (path: string) => {
        const inModules = path.indexOf("/node_modules/");
        const inside = inProject(root, path) !== "" || inModules < 0;
        return Deno.readTextFile(inside ? path : `${root}${path.slice(inModules)}`);
      };
      // @sentry/browser is @sentry/react's dependency, not the app's: found through it.
      let barrel: Promise<string> | undefined;
      const findBarrel = () =>
        barrel ??= resolve("@sentry/react", root)
          .then((react) => resolve("@sentry/browser", dirname(react.path)))
          .then((browser) => browser.path);

      build.onResolve({ filter: /^@sentry\/replay\/worker-bundler$/ }, async ({ kind }) => {
        if (kind !== "entry-point") return undefined;
        const { path, errors } = await resolve(REPLAY_WORKER, dirname(await findBarrel()));
        return { path, errors };
      });
      build.onLoad({ filter: BARREL }, async ({ path }) => ({
        contents: barrelLines(await read(path)),
        loader: "js",
      }));
      build.onResolve({ filter: /^@sentry\/react$/ }, ({ importer }) => {
        const feature = FEATURE_MODULE.exec(inProject(root, importer))?.[1];
        return feature ? { path: feature, namespace: "sentry-feature" } : undefined;
      });
      build.onLoad({ filter: /.*/, namespace: "sentry-feature" }, async ({ path: feature }) => {
        const path = await findBarrel();
        const core = dirname((await resolve("@sentry/core/browser", dirname(path))).path);
        const contents = [
          // monitoring.ts has run by then; importing it keeps its code in the SDK's chunk rather
          // than in one more chunk of its own.
          `import ${JSON.stringify(`${root}/${MONITORING}`)};`,
          `export * from ${JSON.stringify(path)};`,
          barrelLines(await read(path), feature),
          ...feature === "logs" ? [`export * as logger from "${LOGS_COPY}${core}/${LOGGER}";`] : [],
        ].join("\n");
        return { contents, resolveDir: dirname(path), loader: "js" };
      });
      build.onResolve({ filter: new RegExp(`^${LOGS_COPY}`) }, ({ path }) => ({
        path: path.slice(LOGS_COPY.length),
        namespace: "sentry-logs",
      }));
      build.onResolve(
        { filter: /^\.\/internal\.js$/, namespace: "sentry-logs" },
        ({ importer }) => ({
          path: `${dirname(importer)}/internal.js`,
          namespace: "sentry-logs",
        }),
      );
      build.onLoad({ filter: /.*/, namespace: "sentry-logs" }, async ({ path }) => {
        const contents = await read(path);
        // Two copies of a module with state of its own would each keep theirs.
        if (/^(let|var) /m.test(contents)) {
          return { errors: [{ text: `${path} keeps state: the logs chunk cannot copy it` }] };
        }
        return { contents, resolveDir: dirname(path), loader: "js" };
      });
    },
  };
}
