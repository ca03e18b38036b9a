/**
 * The tunnel's own handler (server/tunnel/handler.ts, configured as server/app.ts does) on a
 * bare `Deno.serve`, under V8's defaults like the forwarder: no Host or size checks, request id,
 * common headers or log line, no SDK and no young-generation cap. Against the forwarder it shows
 * what the tunnel's checks cost; against the app, what the rest of the app costs a tunnel request.
 *
 *   deno run --allow-net=127.0.0.1 tests/bench/tunnel_alone.ts DSN
 *
 * Prints one JSON line `{"port":N}` once it listens.
 */
import { createTunnelHandler } from "../../server/tunnel/handler.ts";
import { createBodyBudget } from "../../server/http/body_budget.ts";
import { loadConfig } from "../../server/lifecycle/config.ts";
import { createDeliveryQueue } from "../../server/delivery/queue.ts";

const config = loadConfig({ TUNNEL_ALLOWED_DSNS: Deno.args[0], TUNNEL_RATE_LIMIT: "0" });
const delivery = createDeliveryQueue({
  dsns: config.tunnelAllowedDsns,
  maxBytes: config.deliveryQueueBytes,
  maxAgeMs: config.deliveryMaxAgeS * 1000,
});
// TUNNEL_RATE_LIMIT=0: no per-client limit nor per-DSN budget, as the app then builds it.
const tunnel = createTunnelHandler({
  allowedDsns: config.tunnelAllowedDsns,
  maxBodyBytes: config.tunnelMaxBodyBytes,
  trustProxy: config.trustProxy,
  delivery,
  bodies: createBodyBudget(config.bodies),
});

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, (req, info) => tunnel(req, info));
