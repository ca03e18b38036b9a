/**
 * Reading why the dev server stopped from what Deno printed: real outputs of a syntax error, a
 * render error and a throw at import.
 */
import assert from "node:assert/strict";
import { parseServerFailure } from "../../../server/dev/failure.ts";

const ROOT = "file:///p/";

Deno.test("a syntax error: message, file, line, column and Deno's code frame", () => {
  const output = [
    "Listening on nothing yet",
    "error: SyntaxError: Expression expected",
    "   |",
    "10 |   const x = ;",
    "   |             ~",
    "    at file:///p/client/App.tsx:10:13",
    "",
    "Stack backtrace:",
    "   0: <unknown>",
  ].join("\n");
  assert.deepEqual(parseServerFailure(output, ROOT, 1), {
    text: "SyntaxError: Expression expected",
    file: "client/App.tsx",
    line: 10,
    column: 13,
    lineText: "   |\n10 |   const x = ;\n   |             ~",
    stack: "at client/App.tsx:10:13",
  });
});

Deno.test("a syntax error in a module the server imports: the file's own message and frame", () => {
  // Deno wraps it in a TypeError and draws the importer's line too.
  const output = [
    "error: Uncaught (in promise) TypeError: SyntaxError: Expression expected",
    "  |",
    "4 |   </div>;",
    "  |    ~~~~~~",
    "    at file:///p/client/App.tsx:4:4",
    "const [{ renderPages }, { routes }] = await Promise.all([",
    "                                      ^",
    "    at async Promise.all (index 1)",
    "    at async file:///p/server/lifecycle/boot.ts:130:41",
  ].join("\n");
  assert.deepEqual(parseServerFailure(output, ROOT, 1), {
    text: "SyntaxError: Expression expected",
    file: "client/App.tsx",
    line: 4,
    column: 4,
    lineText: "  |\n4 |   </div>;\n  |    ~~~~~~",
    stack: "at client/App.tsx:4:4\nat async Promise.all (index 1)\n" +
      "at async server/lifecycle/boot.ts:130:41",
  });
});

Deno.test("a render error: located in the project, not in React's frames", () => {
  const output = [
    "\x1b[31merror\x1b[0m: Uncaught (in promise) Error: boom",
    '  throw new Error("boom");',
    "        ^",
    "    at App (file:///p/client/App.tsx:7:9)",
    "    at renderWithHooks (file:///p/node_modules/.deno/react-dom/server.js:5361:19)",
    "    at createDocumentRenderer (file:///p/server/render.ts:44:56)",
  ].join("\n");
  const failure = parseServerFailure(output, ROOT, 1);
  assert.equal(failure.text, "Error: boom");
  assert.deepEqual([failure.file, failure.line, failure.column], ["client/App.tsx", 7, 9]);
  assert.match(failure.stack ?? "", /^at App \(client\/App\.tsx:7:9\)\nat renderWithHooks/);
});

Deno.test("a throw at import, the last error block wins, paths with spaces", () => {
  const output = [
    "error: an earlier line",
    "error: Uncaught Error: import boom",
    "    at file:///p/server/my%20module.ts:53:7",
  ].join("\n");
  const failure = parseServerFailure(output, ROOT, 1);
  assert.equal(failure.text, "Error: import boom");
  assert.equal(failure.file, "server/my module.ts");
  assert.equal(failure.line, 53);
});

Deno.test("no error block: the exit code and the end of the output; bounded", () => {
  assert.deepEqual(parseServerFailure("", ROOT, 3), { text: "The server exited (code 3)." });
  const killed = parseServerFailure("x".repeat(100_000), ROOT, null);
  assert.equal(killed.text, "The server exited (killed by a signal).");
  assert.ok(killed.stack !== undefined && killed.stack.length <= 4_000);
});
