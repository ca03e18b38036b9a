/**
 * The SDK reference for monitoring's cost: the floor baseline (page_answers.ts) with `@sentry/deno`
 * as its docs have a server use it: `Sentry.init` with the DSN and a traces sample rate, and each
 * request in `withIsolationScope`, continuing the client's trace (`continueTrace`) when it sent
 * one, inside `startSpan`, its page carrying `getTraceData()` as meta tags. Run under the app's
 * V8 flags (cases.ts), so that the gate weighs monitoring, not the young-generation cap. The app
 * with monitoring on may cost at most its own shell (the app off minus the floor) more than this.
 * With MODE `integration`, the handler is left to the SDK's own `Deno.serve` integration (its
 * default) instead: what a server that only calls `Sentry.init` pays (reported, not a target).
 *
 *   deno run --v8-flags=... --allow-net=127.0.0.1 --allow-read=PAGE,HEADERS --allow-env \
 *     tests/bench/sdk_reference.ts PAGE HEADERS DSN RATE [MODE]
 *
 * PAGE is an answer of the app with monitoring on (its trace tags are cut out and made fresh per
 * request). Prints one JSON line `{"port":N}` once it listens.
 */
import * as Sentry from "@sentry/deno";
import { escapeHtml } from "../../server/http/html.ts";
import { floorAnswer } from "./page_answers.ts";

const [pagePath, headersPath, dsn, rate, mode] = Deno.args;
const byIntegration = mode === "integration";
Sentry.init({
  dsn,
  tracesSampleRate: Number(rate),
  // Unless the integration is measured, the handler is wrapped by hand below, as the docs' custom
  // instrumentation does; the Deno.serve integration would wrap it a second time.
  integrations: (defaults) =>
    byIntegration ? defaults : defaults.filter((integration) => integration.name !== "DenoServe"),
});

const page = await Deno.readTextFile(pagePath);
const tags = /(?:<meta name="(?:sentry-trace|baggage|traceparent)" content="[^"]*">)+/.exec(page);
if (tags === null) throw new Error(`${pagePath} carries no trace meta tags`);
const answer = floorAnswer(page, JSON.parse(await Deno.readTextFile(headersPath)), tags[0]);

const traceMetaTags = () =>
  Object.entries(Sentry.getTraceData())
    .map(([name, value]) => `<meta name="${name}" content="${escapeHtml(value ?? "")}">`)
    .join("");

Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => console.log(JSON.stringify({ port })),
}, (req) =>
  byIntegration ? answer(req, traceMetaTags()) : Sentry.withIsolationScope(() => {
    const span = () =>
      Sentry.startSpan(
        { name: `${req.method} ${new URL(req.url).pathname}`, op: "http.server" },
        () => answer(req, traceMetaTags()),
      );
    const sentryTrace = req.headers.get("sentry-trace");
    if (sentryTrace === null) return span();
    return Sentry.continueTrace({ sentryTrace, baggage: req.headers.get("baggage") }, span);
  }));
