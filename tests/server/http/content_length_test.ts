import assert from "node:assert/strict";
import { contentLength } from "../../../server/http/content_length.ts";

Deno.test("contentLength: plain decimal numbers only", () => {
  const of = (value?: string) =>
    contentLength(new Headers(value === undefined ? {} : { "content-length": value }));
  assert.equal(of("0"), 0);
  assert.equal(of("1437"), 1437);
  assert.equal(of("42"), 42);
  assert.equal(of("9".repeat(400)), null);
  assert.equal(of(), null);
  for (
    const bad of ["", "-1", "1e3", "0x10", "1,2", "9".repeat(16), "Infinity", "1,", ",1", "1,,1"]
  ) {
    assert.equal(of(bad), null, JSON.stringify(bad));
  }
});

Deno.test("contentLength: the same number repeated is that number; differing ones are null", () => {
  const of = (value: string) => contentLength(new Headers({ "content-length": value }));
  assert.equal(of("61, 61"), 61);
  assert.equal(of("61,61,61"), 61);
  assert.equal(of("0, 0"), 0);
  assert.equal(of("61, 62"), null);
  assert.equal(of("61, 061"), 61, "the same length, as Deno frames the body");
  assert.equal(of(`61${", 61".repeat(5000)}`), 61);
});
