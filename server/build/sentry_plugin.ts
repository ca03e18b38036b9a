/**
 * The client build's Sentry parts: app code reports through `client/sentry.ts`, never the SDK
 * itself, and each optional product (Replay, Feedback, profiling, logs) is only in the chunk that
 * its setting loads.
 */
import type * as esbuild from "esbuild";
import { dirname } from "node:path";

// The client modules that may import the SDK; the rest use client/sentry.ts, which loads it lazily.
const SDK_IMPORTERS = /^client\/(monitoring\.ts|sentry_options\.ts|sentry_features\/)/;
// The SDK's index modules, and their imports of the products.
const SDK_INDEX =
  /\/@sentry\/(browser\/build\/npm\/esm\/\w+\/index|core\/build\/esm\/(index|browser))\.js$/;
const PRODUCT =
  /^(@sentry\/(replay|replay-canvas|feedback)|\.\/(profiling\/integration|logs\/public-api)\.js)$/;
// Profiling and the logger are modules of a package, not packages: what
// client/sentry_features/<name>.ts imports as that package is the module.
const FEATURE_MODULES = new Map([
  ["profiling @sentry/browser", "profiling/integration.js"],
  ["logs @sentry/core", "logs/public-api.js"],
]);
const LOGGER = /\/@sentry\/core\/build\/esm\/logs\/public-api\.js$/;

/** Fail the build when app code imports `@sentry/*` itself instead of `client/sentry.ts`. */
export function sentryImportCheck(root: string): esbuild.Plugin {
  return {
    name: "sentry-import-check",
    setup(build) {
      build.onResolve({ filter: /^@sentry\// }, ({ importer, path }) => {
        const from = importer.startsWith(`${root}/`) ? importer.slice(root.length + 1) : "";
        if (!from.startsWith("client/") || SDK_IMPORTERS.test(from)) return undefined;
        const text = `${from} imports ${path}: import client/sentry.ts instead, which loads ` +
          `the SDK after hydration (importing it puts all of it before)`;
        return { errors: [{ text }] };
      });
    },
  };
}

/**
 * esbuild puts a file in the chunk shared by every chunk that can reach it, and the SDK's index
 * modules re-export every product: their imports of the products are left out (the build fails if
 * something uses one through them), so each product is only in its client/sentry_features/ chunk.
 */
export function sentryProductsApart(): esbuild.Plugin {
  return {
    name: "sentry-products-apart",
    setup(build) {
      build.initialOptions.metafile = true;
      // External and free of side effects: esbuild drops it unless something uses it.
      build.onResolve({ filter: PRODUCT }, ({ importer, path }) => {
        return SDK_INDEX.test(importer) ? { path, external: true, sideEffects: false } : undefined;
      });
      build.onEnd(({ metafile }) => {
        const imports = Object.values(metafile?.outputs ?? {}).flatMap((out) => out.imports);
        const used = new Set(
          imports.filter((i) => i.external && PRODUCT.test(i.path)).map((i) => i.path),
        );
        if (used.size === 0) return;
        const text = `client code uses ${[...used].sort().join(", ")} through @sentry/react, ` +
          `which would load it on every page: Replay, Feedback, profiling and logs load after ` +
          `hydration with their SENTRY_* settings (options in client/sentry_options.ts)`;
        // esbuild does not print what an end callback returns.
        if (build.initialOptions.logLevel !== "silent") console.error(`✘ [ERROR] ${text}`);
        return { errors: [{ text }] };
      });
      build.onResolve({ filter: /^@sentry\/(browser|core)$/ }, async ({ importer, path, kind }) => {
        const feature = /\/client\/sentry_features\/(\w+)\.ts$/.exec(importer)?.[1];
        const module = FEATURE_MODULES.get(`${feature} ${path}`);
        if (module === undefined) return undefined;
        const index = await build.resolve(path, { kind, resolveDir: dirname(importer) });
        const at = `${dirname(index.path)}/${module}`;
        return feature === "logs" ? { path: at, namespace: "sentry-logger" } : { path: at };
      });
      build.onLoad({ filter: /.*/, namespace: "sentry-logger" }, ({ path }) => ({
        contents: `export * as logger from ${JSON.stringify(path)};`,
        resolveDir: dirname(path),
      }));
      // Core's client imports the logger's internal.js too (to flush): the logger gets an instance
      // of its own, so the code that captures logs stays in the logs chunk. Its buffer is a global
      // singleton, which both instances share.
      build.onResolve({ filter: /^\.\/internal\.js$/ }, ({ importer }) => {
        if (!LOGGER.test(importer)) return undefined;
        return { path: `${dirname(importer)}/internal.js`, suffix: "?logger" };
      });
    },
  };
}
