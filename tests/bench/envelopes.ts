/**
 * The envelopes the benchmark posts: what the browser SDK sends through the tunnel, built for
 * a given DSN so the tunnel accepts them.
 */
import { concat } from "../support/tunnel_upload.ts";

const encoder = new TextEncoder();

/**
 * A browser error event as `@sentry/react` sends it: envelope header with the DSN and trace,
 * one `event` item with a stack trace, breadcrumbs and request data. About 2 KB.
 *
 * @example
 * const body = errorEnvelope("http://public@127.0.0.1:9000/1"); // ~2,000 bytes
 */
export function errorEnvelope(dsn: string): Uint8Array<ArrayBuffer> {
  const eventId = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const header = {
    event_id: eventId,
    sent_at: "2025-01-01T12:00:00.000Z",
    sdk: { name: "sentry.javascript.react", version: "10.75.2" },
    dsn,
    trace: {
      environment: "production",
      release: "162644ae603b",
      public_key: "public",
      trace_id: traceId,
      sample_rate: "0.1",
      sampled: "false",
    },
  };
  const frames = [
    ["onClick", "App.tsx", 42],
    ["callCallback", "react-dom.production.js", 3945],
    ["invokeGuardedCallback", "react-dom.production.js", 4056],
    ["dispatchEvent", "react-dom.production.js", 8712],
  ].map(([fn, file, line]) => ({
    function: fn,
    filename: `http://localhost:8000/build/${file}`,
    abs_path: `http://localhost:8000/build/main-FZ4ET4YB.js`,
    lineno: line,
    colno: 17,
    in_app: file === "App.tsx",
  }));
  const event = {
    exception: {
      values: [{
        type: "TypeError",
        value: "Cannot read properties of undefined (reading 'items')",
        stacktrace: { frames },
        mechanism: { type: "onerror", handled: false },
      }],
    },
    level: "error",
    event_id: eventId,
    platform: "javascript",
    timestamp: 1735732800.123,
    environment: "production",
    release: "162644ae603b",
    sdk: { name: "sentry.javascript.react", version: "10.75.2" },
    request: {
      url: "http://localhost:8000/",
      headers: {
        "User-Agent":
          "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36",
      },
    },
    breadcrumbs: [
      { timestamp: 1735732799.5, category: "ui.click", message: "button.primary" },
      { timestamp: 1735732799.9, category: "fetch", data: { method: "GET", url: "/healthz" } },
    ],
    contexts: { trace: { trace_id: traceId, span_id: "00f067aa0ba902b7" } },
  };
  return envelope(header, [[{ type: "event" }, encoder.encode(JSON.stringify(event))]]);
}

/**
 * A session-replay-like envelope of exactly `size` bytes: a small `replay_event` item and a
 * `replay_recording` item whose payload is random (incompressible, like the SDK's gzip) bytes.
 *
 * @example
 * const body = replayEnvelope("http://public@127.0.0.1:9000/1", 1024 * 1024);
 */
export function replayEnvelope(dsn: string, size: number): Uint8Array<ArrayBuffer> {
  const header = { event_id: "1f2e3d4c5b6a79889706b5c4d3e2f1a0", dsn, sdk: { name: "x" } };
  const event = encoder.encode(JSON.stringify({ type: "replay_event", replay_id: "1f2e3d4c" }));
  const fixed = envelope(header, [[{ type: "replay_event" }, event]]).byteLength;
  // The recording item's header names its length, whose digit count is part of the size:
  // header line, payload and the item's closing newline must add up to what is left.
  const itemHeaderBytes = (n: number) =>
    encoder.encode(JSON.stringify({ type: "replay_recording", length: n })).byteLength + 1;
  let payload = size - fixed - itemHeaderBytes(0) - 1;
  payload -= itemHeaderBytes(payload) - itemHeaderBytes(0);
  const recording = new Uint8Array(payload);
  for (let i = 0; i < payload; i += 65536) {
    crypto.getRandomValues(recording.subarray(i, i + 65536));
  }
  const bytes = envelope(header, [[{ type: "replay_event" }, event], [
    { type: "replay_recording", length: payload },
    recording,
  ]]);
  if (bytes.byteLength !== size) throw new Error(`replay envelope is ${bytes.byteLength} bytes`);
  return bytes;
}

function envelope(
  header: unknown,
  items: [unknown, Uint8Array<ArrayBuffer>][],
): Uint8Array<ArrayBuffer> {
  const parts: Uint8Array<ArrayBuffer>[] = [encoder.encode(JSON.stringify(header) + "\n")];
  for (const [itemHeader, payload] of items) {
    parts.push(encoder.encode(JSON.stringify(itemHeader) + "\n"), payload, encoder.encode("\n"));
  }
  return concat(parts);
}
