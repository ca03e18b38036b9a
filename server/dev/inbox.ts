/**
 * The dev inbox: monitoring without Sentry. When it is on (`deno task dev` without
 * `SENTRY_DSN`, or `DEV_INBOX=true`), both SDKs use {@link DEV_INBOX_DSN}; the browser's envelopes
 * still go through the tunnel, whose upstream fetch hands them here instead of the network, and
 * the server SDK's transport hands its own here directly. Nothing is ever fetched, so the tunnel
 * cannot loop back into the app. The last {@link INBOX_LIMIT} errors and transactions are kept
 * in memory and listed, newest first, at `GET /_dev/inbox`.
 */
import {
  type BaseTransportOptions,
  createTransport,
  parseEnvelope,
  type Transport,
} from "@sentry/core";
import type { Handler } from "../http/handler.ts";
import { DEV_INBOX_DSN } from "../constants.ts";
import { ingestUrl, parseDsn } from "../tunnel/dsn.ts";
import { escapeHtml } from "../page/html.ts";
import { decoderFormat } from "../tunnel/policy.ts";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";

/** How many entries the inbox keeps; older ones are dropped. */
export const INBOX_LIMIT = 200;

/** Where an envelope came from. */
export type InboxSource = "browser" | "server";

/** One error or transaction, reduced to what the inbox page shows. */
export interface InboxEntry {
  /** When the inbox received it (ms since the epoch). */
  readonly receivedAt: number;
  readonly source: InboxSource;
  readonly kind: "error" | "transaction";
  /** `TypeError: x is undefined`, a log message, or the transaction's name. */
  readonly title: string;
  /** One `at function (file:line:column)` line per frame, innermost first; "" if none. */
  readonly stack: string;
  readonly traceId?: string;
  readonly eventId?: string;
  /** Transactions: duration and span count. */
  readonly detail?: string;
}

// The parts of a Sentry event payload the inbox reads.
interface Frame {
  function?: string;
  filename?: string;
  abs_path?: string;
  lineno?: number;
  colno?: number;
}
interface EventPayload {
  type?: string;
  event_id?: string;
  message?: string | { formatted?: string; message?: string };
  logentry?: { formatted?: string; message?: string };
  exception?: { values?: { type?: string; value?: string; stacktrace?: { frames?: Frame[] } }[] };
  transaction?: string;
  timestamp?: number;
  start_timestamp?: number;
  spans?: unknown[];
  contexts?: { trace?: { trace_id?: string; op?: string; status?: string } };
}

/** A bounded, in-memory list of what both SDKs reported. */
export class DevInbox {
  readonly #entries: InboxEntry[] = [];
  readonly #limit: number;
  readonly #now: () => number;

  constructor(options: { limit?: number; now?: () => number } = {}) {
    this.#limit = options.limit ?? INBOX_LIMIT;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Add the errors and transactions of one raw (uncompressed) envelope; other items (sessions,
   * client reports, replays) are skipped. Throws if the bytes are not an envelope.
   */
  addEnvelope(bytes: Uint8Array, source: InboxSource): number {
    const [, items] = parseEnvelope(bytes);
    let added = 0;
    for (const [itemHeader, payload] of items) {
      const type = (itemHeader as { type?: string }).type;
      if (type !== "event" && type !== "transaction") continue;
      if (typeof payload !== "object" || payload === null || payload instanceof Uint8Array) {
        continue;
      }
      this.#push(toEntry(payload as EventPayload, type, source, this.#now()));
      added++;
    }
    return added;
  }

  /** Newest first. */
  entries(): InboxEntry[] {
    return this.#entries.toReversed();
  }

  #push(entry: InboxEntry): void {
    this.#entries.push(entry);
    if (this.#entries.length > this.#limit) this.#entries.shift();
  }
}

function toEntry(
  event: EventPayload,
  type: "event" | "transaction",
  source: InboxSource,
  receivedAt: number,
): InboxEntry {
  const common = {
    receivedAt,
    source,
    traceId: event.contexts?.trace?.trace_id,
    eventId: event.event_id,
  };
  if (type === "transaction") {
    const ms = event.timestamp !== undefined && event.start_timestamp !== undefined
      ? Math.round((event.timestamp - event.start_timestamp) * 1000)
      : undefined;
    const op = event.contexts?.trace?.op;
    const parts = [
      op,
      ms === undefined ? undefined : `${ms} ms`,
      `${event.spans?.length ?? 0} spans`,
      event.contexts?.trace?.status,
    ];
    return {
      ...common,
      kind: "transaction",
      title: event.transaction ?? "(unnamed transaction)",
      stack: "",
      detail: parts.filter((p) => p !== undefined).join(", "),
    };
  }
  // Sentry lists chained exceptions cause first; the last one is what was thrown.
  const exception = event.exception?.values?.at(-1);
  const message = typeof event.message === "string"
    ? event.message
    : event.message?.formatted ?? event.message?.message ?? event.logentry?.formatted ??
      event.logentry?.message;
  const title = exception
    ? [exception.type, exception.value].filter(Boolean).join(": ")
    : message ?? "(no message)";
  return { ...common, kind: "error", title, stack: formatFrames(exception?.stacktrace?.frames) };
}

// Sentry orders frames outermost first; people read stacks innermost first.
function formatFrames(frames: Frame[] | undefined): string {
  return (frames ?? []).toReversed().map((f) => {
    const file = f.filename ?? f.abs_path ?? "?";
    const where = [file, f.lineno, f.colno].filter((p) => p !== undefined).join(":");
    return `at ${f.function ?? "?"} (${where})`;
  }).join("\n");
}

/**
 * The tunnel's upstream fetch while the inbox is on: envelopes for {@link DEV_INBOX_DSN} are
 * answered here and go into the inbox; requests for any other allowed DSN go to `upstream`.
 */
export function inboxFetch(inbox: DevInbox, upstream: typeof fetch): typeof fetch {
  const inboxUrl = ingestUrl(parseDsn(DEV_INBOX_DSN)!, "envelope");
  return async (input, init) => {
    // Compared before building a Request: that would take over a streamed body meant upstream.
    const url = input instanceof Request ? input.url : String(input);
    if (url !== inboxUrl) return upstream(input, init);
    try {
      inbox.addEnvelope(await decodedBody(new Request(input, init)), "browser");
    } catch {
      return new Response("not a Sentry envelope\n", { status: 400 });
    }
    return Response.json({ id: crypto.randomUUID().replaceAll("-", "") });
  };
}

/** The server SDK's transport while the inbox is on: no network, straight into the inbox. */
export function inboxTransport(inbox: DevInbox): (options: BaseTransportOptions) => Transport {
  return (options) =>
    createTransport(options, (request) => {
      const body = typeof request.body === "string"
        ? new TextEncoder().encode(request.body)
        : request.body;
      try {
        inbox.addEnvelope(body, "server");
      } catch (error) {
        console.warn("dev inbox: could not read an envelope from the server SDK:", error);
      }
      return Promise.resolve({ statusCode: 200 });
    });
}

// The tunnel forwards the bytes as the browser sent them, compressed or not, and accepts the
// encodings decoderFormat names; the inbox reads the same ones. Whole-body decoding is fine
// here: only this machine's own browser and server post to it.
const DECOMPRESS = { gzip: gunzipSync, deflate: inflateSync, br: brotliDecompressSync } as const;

async function decodedBody(request: Request): Promise<Uint8Array> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  const format = decoderFormat(request.headers.get("content-encoding"));
  if (format === null || format === "unsupported") return bytes;
  return new Uint8Array(DECOMPRESS[format](bytes));
}

/** `GET /_dev/inbox`: the inbox as an HTML page (no script; its own strict CSP). */
export function createInboxPageHandler(inbox: DevInbox): Handler {
  return () => {
    const nonce = crypto.randomUUID();
    return new Response(renderInboxPage(inbox.entries(), nonce), {
      headers: {
        "content-type": "text/html; charset=utf-8",
        "cache-control": "no-store",
        "content-security-policy": `default-src 'none'; style-src 'nonce-${nonce}'`,
      },
    });
  };
}

/** The inbox page's HTML for a list of entries (newest first). */
export function renderInboxPage(entries: readonly InboxEntry[], nonce: string): string {
  const items = entries.map((e) => {
    const time = new Date(e.receivedAt).toISOString().replace("T", " ").slice(0, 23);
    const ids = [
      e.traceId ? `trace ${escapeHtml(e.traceId)}` : "",
      e.eventId ? `event ${escapeHtml(e.eventId)}` : "",
    ].filter(Boolean).join(" · ");
    return [
      `<li class="${e.kind}">`,
      `<div class="meta"><time>${time}</time> ${e.kind} from ${e.source}`,
      e.detail ? ` · ${escapeHtml(e.detail)}` : "",
      ids ? ` · ${ids}` : "",
      `</div>`,
      `<div class="title">${escapeHtml(e.title)}</div>`,
      e.stack ? `<pre>${escapeHtml(e.stack)}</pre>` : "",
      `</li>`,
    ].join("");
  });
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Monitoring inbox (${entries.length})</title>
<style nonce="${escapeHtml(nonce)}">
body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; }
ol { list-style: none; padding: 0; }
li { border-left: 4px solid #888; padding: .4rem .8rem; margin: .6rem 0; background: #f6f6f6; }
li.error { border-color: #c0392b; }
.meta { color: #555; font-size: 12px; }
.title { font-weight: 600; }
pre { margin: .3rem 0 0; font-size: 12px; white-space: pre-wrap; }
</style></head>
<body>
<h1>Monitoring inbox</h1>
<p>What the browser and server SDKs reported, newest first (the last ${INBOX_LIMIT}, kept in
memory; a restart empties it). Set <code>SENTRY_DSN</code> to send to Sentry instead.
<a href="">Refresh</a></p>
${entries.length === 0 ? "<p>Nothing yet.</p>" : `<ol>\n${items.join("\n")}\n</ol>`}
</body>
</html>
`;
}
