import assert from "node:assert/strict";
import { negotiateEncoding, parseAcceptEncoding } from "../../../server/http/accept_encoding.ts";

const both = ["br", "gzip"] as const;

Deno.test("negotiateEncoding: prefers br, then gzip, then identity", () => {
  assert.equal(negotiateEncoding("gzip, deflate, br, zstd", both), "br");
  assert.equal(negotiateEncoding("gzip, deflate", both), "gzip");
  assert.equal(negotiateEncoding("deflate", both), null);
  assert.equal(negotiateEncoding(null, both), null);
  assert.equal(negotiateEncoding("", both), null);
});

Deno.test("negotiateEncoding: only offers what exists", () => {
  assert.equal(negotiateEncoding("br, gzip", ["gzip"]), "gzip");
  assert.equal(negotiateEncoding("br", ["gzip"]), null);
  assert.equal(negotiateEncoding("br, gzip", []), null);
});

Deno.test("negotiateEncoding: honours q values, refusals, wildcards and x-gzip", () => {
  assert.equal(negotiateEncoding("br;q=0, gzip", both), "gzip");
  assert.equal(negotiateEncoding("br;q=0.5, gzip;q=0.8", both), "gzip");
  assert.equal(negotiateEncoding("br;q=0.8, gzip;q=0.8", both), "br");
  assert.equal(negotiateEncoding("*", both), "br");
  assert.equal(negotiateEncoding("*;q=0", both), null);
  assert.equal(negotiateEncoding("br;q=0, *", both), "gzip");
  assert.equal(negotiateEncoding("x-gzip", both), "gzip");
  assert.equal(negotiateEncoding("BR", both), "br");
  assert.equal(negotiateEncoding("br;q=bogus, gzip", both), "gzip");
});

Deno.test("parseAcceptEncoding: weights", () => {
  const weights = parseAcceptEncoding("gzip;q=0.5, br , identity;q=0");
  assert.equal(weights.get("gzip"), 0.5);
  assert.equal(weights.get("br"), 1);
  assert.equal(weights.get("identity"), 0);
});
