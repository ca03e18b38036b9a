/**
 * The server SDK's transport: `fetch` (so `HTTPS_PROXY`, `NO_PROXY` and `DENO_CERT` apply), as
 * `@sentry/deno`'s own, with one difference: transactions and everything else (errors, client
 * reports) wait in separate send buffers. The SDK's single buffer holds 64 envelopes; under
 * load at a high sample rate transactions filled it and an error thrown meanwhile was dropped.
 * Each buffer still counts what it drops as `queue_overflow` in the SDK's client reports.
 */
import type {
  BaseTransportOptions,
  Envelope,
  Transport,
  TransportMakeRequestResponse,
} from "@sentry/core";
import { createTransport, suppressTracing } from "@sentry/deno";

// Taken when this module loads, before `Sentry.init`: the SDK's fetch breadcrumbs must not
// record its own requests.
const platformFetch = globalThis.fetch;

/**
 * The transport factory for `Sentry.init`.
 *
 * @example
 * Sentry.init({ dsn, transport: splitTransport });
 */
export function splitTransport(options: BaseTransportOptions): Transport {
  const makeRequest = async (
    { body }: { body: string | Uint8Array },
  ): Promise<TransportMakeRequestResponse> => {
    const res = await suppressTracing(() =>
      platformFetch(options.url, {
        method: "POST",
        body: body as BodyInit,
        referrerPolicy: "strict-origin",
        headers: options.headers,
      })
    );
    // Only the status and headers are read: the body is released so Deno frees the response.
    await res.body?.cancel();
    return {
      statusCode: res.status,
      headers: {
        "x-sentry-rate-limits": res.headers.get("x-sentry-rate-limits"),
        "retry-after": res.headers.get("retry-after"),
      },
    };
  };
  const transactions = createTransport(options, makeRequest);
  const others = createTransport(options, makeRequest);
  return {
    send: (envelope: Envelope) =>
      (carriesTransaction(envelope) ? transactions : others).send(envelope),
    flush: async (timeout?: number) =>
      (await Promise.all([transactions.flush(timeout), others.flush(timeout)])).every(Boolean),
  };
}

function carriesTransaction(envelope: Envelope): boolean {
  return envelope[1].some(([header]) => header.type === "transaction");
}
