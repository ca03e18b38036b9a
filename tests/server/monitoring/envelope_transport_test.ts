import assert from "node:assert/strict";
import type { Envelope } from "@sentry/core";
import { envelopeTransport } from "../../../server/monitoring/envelope_transport.ts";
import { createIngestClient } from "../../../server/tunnel/ingest_client.ts";

Deno.test("envelopeTransport posts every envelope pipelined over one keep-alive connection", async () => {
  const bodies: string[] = [];
  const clientPorts = new Set<number>();
  const ingest = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req, info) => {
      clientPorts.add((info.remoteAddr as Deno.NetAddr).port);
      bodies.push(`${req.method} ${new URL(req.url).search} ${await req.text()}`);
      return new Response('{"id":"x"}', { headers: { "x-sentry-rate-limits": "" } });
    },
  );
  const client = createIngestClient();
  try {
    const transport = envelopeTransport(client)({
      url: `http://127.0.0.1:${ingest.addr.port}/api/1/envelope/?sentry_key=k`,
      recordDroppedEvent: () => {},
    });
    for (const id of ["a1", "b2", "c3"]) {
      const envelope = [{ event_id: id }, [[{ type: "transaction" }, { event_id: id }]]];
      const result = await transport.send(envelope as Envelope);
      assert.equal(result.statusCode, 200);
    }
    assert.equal(bodies.length, 3);
    assert.ok(bodies.every((body) => body.startsWith("POST ?sentry_key=k {")));
    assert.ok(bodies[2].includes('"event_id":"c3"'));
    // The SDK serializes text envelopes as strings: they go out on the same connection.
    assert.equal(clientPorts.size, 1);
    // Pipelined, not through the one-at-a-time client.
    assert.deepEqual(client.stats, { opened: 0, reused: 0 });
  } finally {
    client.close();
    await ingest.shutdown();
  }
});
