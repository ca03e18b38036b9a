/**
 * The SDK's transport for the server's own envelopes, never through the `fetch` the SDK patched:
 * the patch (breadcrumbs, trace headers, scope forks) costs about 20 µs per envelope and adds
 * nothing, since Sentry skips its own requests anyway. Envelopes go pipelined on one keep-alive
 * connection (envelope_pipeline.ts); an ingest that does not take pipelining gets them through
 * the tunnel's keep-alive HTTP/1.1 client (server/tunnel/ingest_client.ts) one request at a
 * time. Deno's `fetch` spends about 100 µs of CPU per envelope.
 */
import type { BaseTransportOptions } from "@sentry/core";
import { createTransport } from "@sentry/core";
import { NotPipelined } from "../tunnel/envelope_pipeline.ts";
import { headerValue } from "../tunnel/http1_response.ts";
import type { IngestClient } from "../tunnel/ingest_client.ts";
import { sendBuffer } from "./send_buffer.ts";

type TransportOptions = BaseTransportOptions & { headers?: Record<string, string> };

const encoder = new TextEncoder();
// Longest a send may take, pipelined or alone: an ingest that accepts a connection and never
// answers must not hold an envelope, and the SDK's queue behind it, for good.
const SEND_TIMEOUT_MS = 10_000;

/**
 * A transport factory for the Sentry client (sentry_client.ts): envelopes go out pipelined
 * (envelope_pipeline.ts), or one request at a time with `send` once the ingest has shown it
 * does not take pipelined requests. Each send, either way, ends within `timeoutMs`.
 *
 * @example
 * startSentryClient({ ...options, transport: envelopeTransport(createIngestClient()) });
 */
export function envelopeTransport(
  client: IngestClient,
  { timeoutMs = SEND_TIMEOUT_MS }: { readonly timeoutMs?: number } = {},
) {
  return (options: TransportOptions) => {
    // Resent once after a broken connection: each envelope carries an event id. Transactions
    // come in batches (monitoring/sentry.ts) and share a write without waiting: envelopes sent
    // in one turn go together (a traced request cost about 190 µs when each went alone, 100 µs
    // when they shared).
    const pipeline = client.pipeline(options.url, { resend: true, timeoutMs });
    const oneByOne = async (body: Uint8Array<ArrayBuffer>, headers: Record<string, string>) => {
      const res = await client.fetch(options.url, {
        method: "POST",
        body,
        // A plain record: the keep-alive client writes it into the request head as it is.
        headers,
        // An ingest has no reason to redirect, and following one would send the envelope to
        // wherever it pointed.
        redirect: "manual",
        referrerPolicy: "strict-origin",
        signal: AbortSignal.timeout(timeoutMs),
      });
      // Unread bodies keep their connection (and a resource) open until collected.
      await res.body?.cancel();
      return answerFor(res.status, (name) => res.headers.get(name));
    };
    return createTransport(options, async ({ body }) => {
      // The SDK serializes into a fresh Uint8Array (never a SharedArrayBuffer), or a string
      // when every item is text.
      const bytes = typeof body === "string"
        ? encoder.encode(body)
        : body as Uint8Array<ArrayBuffer>;
      const headers = { ...options.headers };
      if (!pipeline.pipelining) return await oneByOne(bytes, headers);
      try {
        const answer = await pipeline.send(bytes, headers);
        return answerFor(answer.status, (name) => headerValue(answer.headers, name));
      } catch (error) {
        if (error instanceof NotPipelined) return await oneByOne(bytes, headers);
        throw error;
      }
    }, sendBuffer(options.bufferSize || undefined));
  };
}

// What the SDK reads from the ingest's answer: its status and the two headers its rate limits
// come from.
function answerFor(statusCode: number, header: (name: string) => string | null) {
  return {
    statusCode,
    headers: {
      "x-sentry-rate-limits": header("x-sentry-rate-limits"),
      "retry-after": header("retry-after"),
    },
  };
}
