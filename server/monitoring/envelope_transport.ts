/**
 * The SDK's transport for the server's own envelopes, on the `fetch` from before the SDK
 * patched it: the patch (breadcrumbs, trace headers, scope forks) costs about 20 µs per
 * envelope and adds nothing, since Sentry skips its own requests anyway.
 */
import type { BaseTransportOptions } from "@sentry/core";
import * as Sentry from "@sentry/deno";

type TransportOptions = BaseTransportOptions & { headers?: Record<string, string> };

/**
 * A transport factory for `Sentry.init({ transport })`; `send` is the unpatched `fetch`.
 *
 * @example
 * const plainFetch = globalThis.fetch; // before Sentry.init
 * Sentry.init({ dsn, transport: envelopeTransport(plainFetch) });
 */
export function envelopeTransport(send: typeof fetch) {
  return (options: TransportOptions) =>
    Sentry.createTransport(options, async ({ body }) => {
      const res = await send(options.url, {
        method: "POST",
        // The SDK serializes into a fresh Uint8Array (never a SharedArrayBuffer) or a string.
        body: body as string | Uint8Array<ArrayBuffer>,
        headers: options.headers,
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
