/**
 * The benchmark's load cases and the servers they run against: the app (monitoring on, off,
 * every request traced), a bare `Deno.serve` baseline, one answering with the app's exact page
 * and headers, the same with `@sentry/deno` as its docs say (the SDK reference), a minimal
 * `fetch` forwarder (buffering, and streaming), the tunnel's handler alone and the ingest
 * directly, for GET /, a hashed asset and tunnel posts; and a copy of the app whose page loader
 * makes one `fetch` to a backend, traced and not.
 */
import type { LoadCase } from "./load.ts";
import { loaderProject } from "./loader_app.ts";
import { type Pinning, type Server, startApp, startScript } from "./processes.ts";
import { loadConfig } from "../../server/lifecycle/config.ts";
import { V8_FLAGS } from "../../server/lifecycle/serve_args.ts";

/** What the cases need: the running ingest, the app's settings and the bodies they send. */
export interface CaseInputs {
  readonly ingest: Server;
  /** A second ingest, on wrk's CPU: where Sentry is in production, away from the app's. */
  readonly ingestAway: Server;
  readonly appEnv: Record<string, string>;
  /** The DSN the envelopes name, which the forwarder baseline allows. */
  readonly dsn: string;
  readonly pinning: Pinning | undefined;
  /** Where the page and its headers are written for the baselines. */
  readonly bodiesDir: string;
  /** The hashed client entry, from the build manifest. */
  readonly assetPath: string;
  readonly smallFile: string;
  readonly smallBytes: number;
  readonly largeFile: string;
  /** Registers each server for stopping when the benchmark ends. */
  readonly keep: (server: Server) => Server;
  /** Registers what to remove once every server has stopped (the loader app's project copy). */
  readonly afterwards: (cleanUp: () => PromiseLike<void>) => void;
}

/** The cases by name (each with the server that answers it), and the app with the tunnel. */
export type Cases = Awaited<ReturnType<typeof startCases>>;
/** One case's name, as in bench-results/latest.json. */
export type CaseName = keyof Cases["cases"];

/** Start every server the cases need and describe each case. */
export async function startCases(inputs: CaseInputs) {
  const { ingest, appEnv, pinning, keep } = inputs;
  const bodies = inputs.bodiesDir;
  const app = keep(await startApp(appEnv, pinning?.servers));
  // The page cases get apps of their own, which take only page load like the baselines: their
  // RSS after the run is compared with the identical baseline's under the same load.
  const appPage = keep(await startApp(appEnv, pinning?.servers));
  // Monitoring on, its envelopes to the ingest away from the app's CPU: what the same-CPU
  // ingest's wake-ups cost the app, told apart from what monitoring itself costs.
  const appPageAway = keep(
    await startApp(
      { ...appEnv, SENTRY_DSN: `http://public@${new URL(inputs.ingestAway.url).host}/1` },
      pinning?.servers,
    ),
  );
  // The same app with monitoring off, and with every request traced.
  const appOff = keep(await startApp({}, pinning?.servers));
  const appAll = keep(
    await startApp({ ...appEnv, SENTRY_TRACES_SAMPLE_RATE: "1" }, pinning?.servers),
  );
  const pageRes = await fetch(appPage.url);
  const page = await pageRes.text();
  const pageBytes = new TextEncoder().encode(page).byteLength;
  await Deno.writeTextFile(`${bodies}/page.html`, page);
  // What the identical-response baseline answers: the app's headers, less what Deno sets itself
  // and the request id, which it makes per request as the app does.
  const appHeaders = Object.fromEntries(
    [...pageRes.headers].filter(([name]) =>
      !["date", "content-length", "x-request-id"].includes(name)
    ),
  );
  await Deno.writeTextFile(`${bodies}/page-headers.json`, JSON.stringify(appHeaders));
  // An identical-response baseline: `flags` before the script (V8's), `mode` after the files.
  const identicalResponse = async (flags: string[], mode: string[]) =>
    keep(
      await startScript(
        "baseline.ts",
        [...flags, "--allow-net=127.0.0.1", `--allow-read=${bodies}`],
        [`${bodies}/page.html`, `${bodies}/page-headers.json`, ...mode],
        pinning?.servers,
      ),
    );
  const identical = await identicalResponse([], []);
  // The same baseline under the app's own V8 flags, whose young generation is capped: what a
  // like-for-like server holds, for an RSS line that is not a target. With V8's defaults the
  // baseline's young generation grows in steps under sustained load (docs/benchmarks.md).
  const identicalCapped = await identicalResponse([V8_FLAGS], []);
  const floor = await identicalResponse([], ["floor"]);
  // The floor with @sentry/deno wrapped as its docs say, at the app's rate, sending to the same
  // ingest as the app with monitoring on. Under the app's V8 flags: the gate weighs what the app's
  // monitoring adds against what the SDK adds, not the young-generation cap, whose CPU the memory
  // targets pay for (measured apart in docs/benchmarks.md).
  const sdkReferenceIn = async (mode: string[]) =>
    keep(
      await startScript(
        "sdk_reference.ts",
        [V8_FLAGS, "--allow-net=127.0.0.1", `--allow-read=${bodies}`, "--allow-env"],
        [`${bodies}/page.html`, `${bodies}/page-headers.json`, inputs.dsn, DEFAULT_RATE, ...mode],
        pinning?.servers,
      ),
    );
  const sdkReference = await sdkReferenceIn([]);
  // The same with the SDK's own Deno.serve integration doing the wrapping (reported, not a target).
  const sdkServe = await sdkReferenceIn(["integration"]);
  const baseline = keep(
    await startScript(
      "baseline.ts",
      [
        "--allow-net=127.0.0.1",
        `--allow-read=${bodies}/page.html`,
      ],
      [`${bodies}/page.html`],
      pinning?.servers,
    ),
  );

  const { smallFile, largeFile, smallBytes } = inputs;
  const forwarder = keep(
    await startScript("forwarder.ts", ["--allow-net=127.0.0.1"], [inputs.dsn], pinning?.servers),
  );
  const streamingForwarder = keep(
    await startScript(
      "forwarder.ts",
      ["--allow-net=127.0.0.1"],
      [inputs.dsn, "stream"],
      pinning?.servers,
    ),
  );
  const tunnelAlone = keep(
    await startScript("tunnel_alone.ts", ["--allow-net=127.0.0.1"], [inputs.dsn], pinning?.servers),
  );
  // The loader's backend is another service: on wrk's CPU, like the ingest away.
  const backend = keep(
    await startScript("backend.ts", ["--allow-net=127.0.0.1"], [], pinning?.wrk),
  );
  const project = await loaderProject(`${backend.url}/`, bodies);
  inputs.afterwards(() => project[Symbol.asyncDispose]());
  // The same page untraced (monitoring off), and every request traced with trace headers sent to
  // the backend (a span and headers per fetch, one transaction envelope per request).
  const loaderOff = keep(await startApp({}, pinning?.servers, project.dir));
  const loaderTraced = keep(
    await startApp(
      {
        ...appEnv,
        SENTRY_TRACES_SAMPLE_RATE: "1",
        SENTRY_TRACE_PROPAGATION_TARGETS: `${backend.url}/`,
      },
      pinning?.servers,
      project.dir,
    ),
  );

  const tunnelUrl = new URL("/monitoring", app.url).href;
  const directUrl = `${ingest.url}/api/1/envelope/`;
  const cases = {
    baseline: { label: "GET / baseline (bare Deno.serve)", url: baseline.url, server: baseline },
    identical: {
      label: "GET / identical-response baseline",
      url: identical.url,
      server: identical,
    },
    floor: {
      label: "GET / floor: identical + request read",
      url: floor.url,
      server: floor,
    },
    sdkReference: {
      label: "GET / SDK reference: floor + @sentry/deno",
      url: sdkReference.url,
      server: sdkReference,
    },
    sdkServe: {
      label: "GET / the same, SDK's Deno.serve integration",
      url: sdkServe.url,
      server: sdkServe,
    },
    pageOff: { label: "GET / app, monitoring off", url: appOff.url, server: appOff },
    page: { label: "GET / app, monitoring on (default rate)", url: appPage.url, server: appPage },
    pageAway: {
      label: "GET / app, on, ingest on wrk's CPU",
      url: appPageAway.url,
      server: appPageAway,
    },
    pageAll: { label: "GET / app, every request traced", url: appAll.url, server: appAll },
    loaderOff: {
      label: "GET / loader with a fetch, app off",
      url: loaderOff.url,
      server: loaderOff,
    },
    loaderTraced: {
      label: "GET / loader with a fetch, all traced",
      url: loaderTraced.url,
      server: loaderTraced,
    },
    asset: {
      label: "GET hashed asset, app (br)",
      url: new URL(inputs.assetPath, app.url).href,
      server: app,
      headers: ["Accept-Encoding: gzip, deflate, br"],
    },
    tunnel2k: {
      label: `POST /monitoring ${smallBytes} B`,
      url: tunnelUrl,
      server: app,
      body: smallFile,
    },
    forward2k: {
      label: `POST fetch forwarder ${smallBytes} B`,
      url: forwarder.url,
      server: forwarder,
      body: smallFile,
    },
    tunnelAlone2k: {
      label: `POST tunnel handler alone ${smallBytes} B`,
      url: tunnelAlone.url,
      server: tunnelAlone,
      body: smallFile,
    },
    direct2k: {
      label: `POST ingest direct ${smallBytes} B`,
      url: directUrl,
      server: ingest,
      body: smallFile,
    },
    tunnel1m: { label: "POST /monitoring 1 MiB", url: tunnelUrl, server: app, body: largeFile },
    forward1m: {
      label: "POST fetch forwarder 1 MiB",
      url: forwarder.url,
      server: forwarder,
      body: largeFile,
    },
    forwardStream1m: {
      label: "POST fetch forwarder, streaming, 1 MiB",
      url: streamingForwarder.url,
      server: streamingForwarder,
      body: largeFile,
    },
    direct1m: {
      label: "POST ingest direct 1 MiB",
      url: directUrl,
      server: ingest,
      body: largeFile,
    },
  } satisfies Record<string, LoadCase>;
  const capped: LoadCase = {
    label: "GET / identical-response baseline, the app's V8 flags",
    url: identicalCapped.url,
    server: identicalCapped,
  };
  return { cases, pageBytes, app, capped, backend };
}

// The app's default traces sample rate, which the SDK reference runs at too.
const DEFAULT_RATE = String(loadConfig({}).tracesSampleRate);
