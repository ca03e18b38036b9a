/**
 * Why the dev server stopped, read from what Deno printed when it did: the message, the file and
 * line it points at in the project (not in node_modules), the code frame Deno drew, and the rest
 * of the output. Pure, so the runner (server/tasks/dev.ts) and its tests share it.
 */
import type { BuildError } from "./reload.ts";

// The overlay shows the end of the output; a crash loop must not grow the page without bound.
const MAX_STACK_CHARS = 4_000;
const MAX_FRAME_LINES = 8;

// Colours, in case the child was told to use them (FORCE_COLOR) while piped.
// deno-lint-ignore no-control-regex
const ANSI = /\x1b\[[0-9;]*m/g;
const ERROR_LINE = /^error: (.*)$/;
const LOCATION = /(file:\/\/\/[^\s()]+?):(\d+):(\d+)/;

/**
 * Describe a server that exited: the last `error: ...` block Deno printed, located at the first
 * stack frame inside `root` (a `file:///.../` URL of the project), paths made relative to it.
 *
 * @example
 * parseServerFailure("error: Uncaught Error: boom\n    at file:///p/server/x.ts:3:7\n", "file:///p/", 1)
 * // { text: "Error: boom", file: "server/x.ts", line: 3, column: 7, stack: "..." }
 */
export function parseServerFailure(output: string, root: string, code: number | null): BuildError {
  const lines = output.replace(ANSI, "").split("\n").map((line) => line.trimEnd());
  const start = lines.findLastIndex((line) => ERROR_LINE.test(line));
  if (start < 0) {
    const tail = lines.join("\n").trim().slice(-MAX_STACK_CHARS);
    return {
      text: `The server exited (${code === null ? "killed by a signal" : `code ${code}`}).`,
      ...(tail && { stack: tail }),
    };
  }
  // A module that does not parse fails its importer's `import()` as a TypeError around the
  // SyntaxError: the SyntaxError is what the developer wrote.
  const text = ERROR_LINE.exec(lines[start])![1].replace(/^Uncaught (\(in promise\) )?/, "")
    .replace(/^TypeError: (?=SyntaxError: )/, "");
  const rest = lines.slice(start + 1);
  const firstFrame = rest.findIndex((line) => /^\s+at /.test(line));
  const frame = (firstFrame < 0 ? [] : rest.slice(0, firstFrame))
    .filter((line) => line.trim() !== "").slice(0, MAX_FRAME_LINES).join("\n");
  const frames = firstFrame < 0 ? [] : rest.slice(firstFrame).filter((l) => /^\s+at /.test(l));
  const located = frames.map((line) => LOCATION.exec(line)).filter((m) => m !== null);
  const own = located.find(([, url]) => url.startsWith(root) && !url.includes("/node_modules/")) ??
    located[0];
  const stack = frames.map((line) => relative(line.trim(), root)).join("\n")
    .slice(0, MAX_STACK_CHARS);
  return {
    text,
    ...(own && {
      file: relative(decodeURIComponent(own[1]), decodeURIComponent(root)),
      line: Number(own[2]),
      column: Number(own[3]),
    }),
    ...(frame && { lineText: frame }),
    ...(stack && { stack }),
  };
}

function relative(text: string, root: string): string {
  return text.replaceAll(root, "");
}
