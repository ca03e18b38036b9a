/**
 * The server's monitoring as one file for production: server/monitoring/sentry.ts with its own
 * modules and only the parts of `@sentry/core` it runs, bundled by esbuild (about 250 KB).
 *
 * Loaded from npm, `@sentry/core` brings all of its 237 modules, whichever few are used: about
 * 8 MB more resident memory than the bundle (after a full collection, +12 MB against +4 MB
 * over a bare script). Development and tests load the source; server/lifecycle/boot.ts takes
 * the bundle when a production build left one.
 */
import * as esbuild from "esbuild";
import { MONITORING_BUNDLE } from "../constants.ts";

/** The module bundled: what boot.ts would otherwise import. */
export const MONITORING_ENTRY = "server/monitoring/sentry.ts";

/** Write the bundle (the build has created its folder already). */
export async function bundleMonitoring(): Promise<void> {
  await esbuild.build({
    entryPoints: [MONITORING_ENTRY],
    outfile: MONITORING_BUNDLE,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    // Sentry's tree-shaking flag: no debug logging in production.
    define: { __SENTRY_DEBUG__: "false" },
    mainFields: ["module", "main"],
    legalComments: "inline",
    logLevel: "warning",
  });
}
