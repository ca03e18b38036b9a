import assert from "node:assert/strict";
import {
  checkRequestLimits,
  MAX_HEADER_BYTES,
  MAX_URL_BYTES,
} from "../../../server/http/request_limits.ts";

Deno.test("checkRequestLimits: ordinary requests pass", () => {
  assert.equal(checkRequestLimits(new Request("http://x/a?b=c")), null);
});

Deno.test("checkRequestLimits: 414 for a long URL", async () => {
  const res = checkRequestLimits(new Request(`http://x/?q=${"a".repeat(MAX_URL_BYTES)}`));
  assert.equal(res?.status, 414);
  assert.match(await res!.text(), /^URL longer than \d+ bytes\n$/);
});

Deno.test("checkRequestLimits: 431 for large headers", async () => {
  const headers = new Headers();
  for (let i = 0; i < 40; i++) headers.set(`x-h${i}`, "v".repeat(MAX_HEADER_BYTES / 32));
  const res = checkRequestLimits(new Request("http://x/", { headers }));
  assert.equal(res?.status, 431);
  await res!.body?.cancel();
});
