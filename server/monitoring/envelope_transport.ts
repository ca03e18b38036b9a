/**
 * The SDK's transport for the server's own envelopes, on a `fetch` the SDK never patched: the
 * patch (breadcrumbs, trace headers, scope forks) costs about 20 µs per envelope and adds
 * nothing, since Sentry skips its own requests anyway. In production that `fetch` is the
 * tunnel's keep-alive HTTP/1.1 client (server/tunnel/ingest_client.ts): Deno's `fetch` spends
 * about 100 µs of CPU per envelope, about half of what a traced request costs in all.
 */
import type { BaseTransportOptions } from "@sentry/core";
import * as Sentry from "@sentry/deno";

type TransportOptions = BaseTransportOptions & { headers?: Record<string, string> };

const encoder = new TextEncoder();

/**
 * A transport factory for `Sentry.init({ transport })` that posts each envelope with `send`.
 *
 * @example
 * Sentry.init({ dsn, transport: envelopeTransport(createIngestClient().fetch) });
 */
export function envelopeTransport(send: typeof fetch) {
  return (options: TransportOptions) =>
    Sentry.createTransport(options, async ({ body }) => {
      const res = await send(options.url, {
        method: "POST",
        // The SDK serializes into a fresh Uint8Array (never a SharedArrayBuffer), or a string
        // when every item is text; the keep-alive client takes bytes only.
        body: typeof body === "string" ? encoder.encode(body) : body as Uint8Array<ArrayBuffer>,
        // A plain record: the keep-alive client writes it into the request head as it is.
        headers: { ...options.headers },
        // An ingest has no reason to redirect, and following one would send the envelope to
        // wherever it pointed.
        redirect: "manual",
        referrerPolicy: "strict-origin",
      });
      // Unread bodies keep their connection (and a resource) open until collected.
      await res.body?.cancel();
      return {
        statusCode: res.status,
        headers: {
          "x-sentry-rate-limits": res.headers.get("x-sentry-rate-limits"),
          "retry-after": res.headers.get("retry-after"),
        },
      };
    });
}
