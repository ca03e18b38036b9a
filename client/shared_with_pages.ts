/**
 * The shell's modules a page may import. Every page module imports this one too (the build adds
 * it): all of them then share one set of importers and stay in the shell's chunks whichever a
 * page uses, so pages coming and going never change the shell's bytes.
 */
import "react";
import "react/jsx-runtime";
import "./config.ts";
import "./sentry.ts";
import "./use_hydrated.ts";
