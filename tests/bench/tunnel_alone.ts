/**
 * The tunnel's own handler (server/tunnel/handler.ts, configured as the app configures it) on a
 * bare `Deno.serve`, under V8's defaults like the forwarder: no Host or size checks, request id,
 * common headers or log line, no SDK and no young-generation cap. Against the forwarder it shows
 * what the tunnel's checks cost; against the app, what the rest of the app costs a tunnel request.
 *
 *   deno run --allow-net=127.0.0.1 tests/bench/tunnel_alone.ts DSN
 *
 * Prints one JSON line `{"port":N}` once it listens.
 */
import { configuredTunnel } from "../../server/app.ts";
import { loadConfig } from "../../server/lifecycle/config.ts";
import { createDeliveryQueue } from "../../server/delivery/queue.ts";

const config = loadConfig({ TUNNEL_ALLOWED_DSNS: Deno.args[0], TUNNEL_RATE_LIMIT: "0" });
const delivery = createDeliveryQueue({
  dsns: config.tunnelAllowedDsns,
  maxBytes: config.deliveryQueueBytes,
  maxAgeMs: config.deliveryMaxAgeS * 1000,
});
const tunnel = configuredTunnel(config, delivery);

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, (req, info) => tunnel(req, info));
