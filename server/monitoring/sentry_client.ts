/**
 * The server's Sentry client, on `@sentry/core` alone. It does what `@sentry/deno`'s `init`
 * does for the parts this server uses: the same client options and SDK name, the Node-style
 * stack parser Deno's stacks need, the Deno context and the global error handlers. Not console
 * breadcrumbs: the server has one scope for all its requests, so what it logs for one request
 * (a failed request's error and stack) would ride along in the next request's error event.
 * `@sentry/deno` also loads some twenty integrations for databases, web frameworks and
 * OpenTelemetry, which this server never runs: about 9 MB of resident memory (measured with
 * `Deno.memoryUsage()` after a full collection: 62 MB with it, 53 MB with the core alone).
 */
import {
  type BaseTransportOptions,
  captureEvent,
  type Client,
  createStackParser,
  dedupeIntegration,
  type Event,
  eventFiltersIntegration,
  eventFromUnknownInput,
  flush,
  functionToStringIntegration,
  getClient,
  initAndBind,
  type Integration,
  isPrimitive,
  linkedErrorsIntegration,
  nodeStackLineParser,
  requestDataIntegration,
  SDK_VERSION,
  ServerRuntimeClient,
  type Transport,
} from "@sentry/core";
import { FLUSH_TIMEOUT_MS } from "../constants.ts";
import { reportable } from "./reportable.ts";

/** What the server's client is started with. */
export interface SentryClientOptions {
  readonly dsn: string;
  readonly environment: string;
  readonly release: string;
  readonly tracesSampleRate: number;
  readonly transport: (options: BaseTransportOptions) => Transport;
  /** Integrations of the app's own, after the standard ones. */
  readonly integrations?: readonly Integration[];
}

/**
 * Start the client and make it the current one (so `captureException`, `withScope` and `flush`
 * from `@sentry/core` use it).
 *
 * @example
 * startSentryClient({ dsn, environment, release, tracesSampleRate: 0.1, transport });
 */
/** Longest string value (an exception's message, for one) an event carries. */
export const MAX_VALUE_LENGTH = 8 * 1024;

export function startSentryClient(options: SentryClientOptions): Client {
  return initAndBind(ServerRuntimeClient, {
    dsn: options.dsn,
    environment: options.environment,
    release: options.release,
    tracesSampleRate: options.tracesSampleRate,
    transport: options.transport,
    // A message can carry a client's input of any length (`new URL(input)` quotes it whole);
    // unset, the SDK sends it all (a 5 MB message made a 5 MB event).
    maxValueLength: MAX_VALUE_LENGTH,
    stackParser: createStackParser(nodeStackLineParser()),
    integrations: [
      eventFiltersIntegration(),
      requestDataIntegration(),
      functionToStringIntegration(),
      linkedErrorsIntegration(),
      dedupeIntegration(),
      denoContextIntegration(),
      globalHandlersIntegration(),
      ...options.integrations ?? [],
    ],
    platform: "javascript",
    runtime: { name: "deno", version: Deno.version.deno },
    serverName: hostName(),
    // The name @sentry/deno reports: Sentry shows these events as Deno's.
    _metadata: {
      sdk: {
        name: "sentry.javascript.deno",
        packages: [{ name: "npm:@sentry/core", version: SDK_VERSION }],
        version: SDK_VERSION,
      },
    },
  });
}

function hostName(): string | undefined {
  const granted = Deno.permissions.querySync({ name: "sys", kind: "hostname" }).state;
  return granted === "granted" ? Deno.hostname() : undefined;
}

/** The runtime's contexts on every event: OS, architecture, CPUs, V8, start time. */
function denoContextIntegration(): Integration {
  const os = ({ darwin: "macOS", linux: "Linux", windows: "Windows" } as Record<string, string>)[
    Deno.build.os
  ] ?? Deno.build.os;
  const contexts: Event["contexts"] = {
    app: { app_start_time: new Date(Date.now() - performance.now()).toISOString() },
    device: { arch: Deno.build.arch, processor_count: navigator.hardwareConcurrency },
    os: { name: os },
    v8: { name: "v8", version: Deno.version.v8 },
  };
  return {
    name: "DenoContext",
    processEvent(event) {
      event.contexts = { ...contexts, ...event.contexts };
      return event;
    },
  };
}

function nonErrorEvent(value: string): Event {
  return { exception: { values: [{ type: "Error", value: `Non-Error value thrown: ${value}` }] } };
}

// The SDK's event for a value, or one that says it could not be read (never a second fault).
function eventOrFallback(build: () => Event): Event {
  try {
    return build();
  } catch {
    return nonErrorEvent("a value the SDK could not read");
  }
}

/**
 * Uncaught errors and unhandled rejections: reported as fatal and unhandled, then, once sent
 * (or the flush gave up), thrown again so the process ends as it would have without Sentry.
 */
function globalHandlersIntegration(): Integration {
  let exiting = false;
  const report = (client: Client, error: unknown, type: string) => {
    // First: a fault below must not bring this handler back for its own error.
    exiting = true;
    const stackParser = client.getOptions().stackParser;
    // What the SDK can read whole (reportable.ts); the process still ends with `error` itself.
    const readable = reportable(error);
    const event = isPrimitive(readable)
      ? nonErrorEvent(String(readable))
      : eventOrFallback(() => eventFromUnknownInput(client, stackParser, readable));
    event.level = "fatal";
    try {
      captureEvent(event, { originalException: readable, mechanism: { handled: false, type } });
    } catch {
      // The process ends with `error` below all the same.
    }
    // Bounded: an ingest that never answers must not keep a failed process serving.
    flush(FLUSH_TIMEOUT_MS).finally(() => {
      throw error;
    });
  };
  return {
    name: "GlobalHandlers",
    setup(client) {
      globalThis.addEventListener("error", (e) => {
        if (getClient() !== client || exiting) return;
        e.preventDefault();
        report(client, e.error ?? e.message, "auto.deno.global_handlers.error");
      });
      globalThis.addEventListener("unhandledrejection", (e) => {
        if (getClient() !== client || exiting) return;
        e.preventDefault();
        report(client, e.reason, "auto.deno.global_handlers.unhandledrejection");
      });
    },
  };
}
