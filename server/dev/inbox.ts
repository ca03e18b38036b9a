/** The dev inbox: monitoring without Sentry. Both SDKs use {@link DEV_INBOX_DSN}; the delivery
 * queue's fetch and the server's transport hand envelopes here, so nothing leaves the machine. */
import {
  type BaseTransportOptions,
  createTransport,
  type Event,
  parseEnvelope,
} from "@sentry/core";
import { DEV_INBOX_DSN } from "../constants.ts";
import { answerText } from "../http/error_pages.ts";
import { escapeHtml } from "../http/html.ts";
import { contentEncoding } from "../tunnel/policy.ts";
import { decoder } from "../tunnel/envelope.ts";
import { Buffer } from "node:buffer";
import { Readable } from "node:stream";

/** One thing an SDK reported, as the inbox page lists it. */
export interface InboxEntry {
  readonly source: "browser" | "server";
  readonly kind: "error" | "transaction" | "replay" | "feedback" | "profile" | "log";
  /** `TypeError: x is undefined`, a message, a transaction's name and duration, a log line... */
  readonly title: string;
  /** Errors: one `at function (file:line:column)` line per frame, innermost first. */
  readonly stack?: string;
  readonly traceId?: string;
}

/** A bounded, in-memory list of what both SDKs reported, oldest first (older are dropped). */
export class DevInbox {
  readonly entries: InboxEntry[] = [];
  constructor(readonly limit = 200) {}

  /** Add what one uncompressed envelope holds (but sessions, recordings...); throws if it is
   * no envelope. */
  add(bytes: Uint8Array, source: InboxEntry["source"]): void {
    for (const [{ type }, payload] of parseEnvelope(bytes)[1]) {
      if (typeof payload !== "object" || !payload || payload instanceof Uint8Array) continue;
      for (const entry of toEntries(String(type), payload as Item)) {
        // Cut: the page lists 200 entries, and a message can be megabytes.
        const cut = entry.stack === undefined ? {} : { stack: entry.stack.slice(0, 10_000) };
        this.entries.push({ source, ...entry, title: entry.title.slice(0, 1000), ...cut });
        if (this.entries.length > this.limit) this.entries.shift();
      }
    }
  }
}

// The fields of the other item types the inbox shows (replay_event, profile, log).
type Item = Event & {
  replay_id?: string;
  replay_type?: string;
  segment_id?: number;
  trace_ids?: string[];
  transactions?: { name?: string; trace_id?: string }[];
  profile?: { samples?: unknown[] };
  items?: { level?: string; body?: string; trace_id?: string }[];
};

function toEntries(type: string, item: Item): Omit<InboxEntry, "source">[] {
  const traceId = item.contexts?.trace?.trace_id;
  switch (type) {
    case "event": {
      // Chained exceptions come cause first: the last one is what was thrown.
      const thrown = item.exception?.values?.at(-1);
      const title = thrown
        ? [thrown.type, thrown.value].filter(Boolean).join(": ")
        : item.message ?? item.logentry?.message ?? "(no message)";
      // Sentry lists frames outermost first; people read stacks innermost first.
      const stack = (thrown?.stacktrace?.frames ?? []).toReversed().map((f) =>
        `at ${f.function ?? "?"} (${[f.filename, f.lineno, f.colno].filter(Boolean).join(":")})`
      ).join("\n");
      return [{ kind: "error", title, stack, traceId }];
    }
    case "transaction": {
      const ms = Math.round(((item.timestamp ?? 0) - (item.start_timestamp ?? 0)) * 1000);
      return [{ kind: "transaction", title: `${item.transaction} (${ms} ms)`, traceId }];
    }
    case "replay_event": {
      const title = `${item.replay_type} replay ${item.replay_id}, segment ${item.segment_id}`;
      return [{ kind: "replay", title, traceId: item.trace_ids?.[0] }];
    }
    case "feedback": {
      const title = String(item.contexts?.feedback?.message ?? "(no message)");
      return [{ kind: "feedback", title, traceId }];
    }
    case "profile": {
      const [transaction] = item.transactions ?? [];
      const title = `${transaction?.name} (${item.profile?.samples?.length ?? 0} samples)`;
      return [{ kind: "profile", title, traceId: transaction?.trace_id }];
    }
    case "log":
      return (Array.isArray(item.items) ? item.items : []).map((log) => {
        return { kind: "log", title: `${log.level}: ${log.body}`, traceId: log.trace_id };
      });
  }
  return [];
}

/** The tunnel's upstream fetch: envelopes for the inbox's DSN land here (up to `max` bytes
 * decoded, as the tunnel caps them on the wire), others go upstream. */
export function inboxFetch(inbox: DevInbox, upstream: typeof fetch, max: number): typeof fetch {
  const inboxHost = new URL(DEV_INBOX_DSN).host;
  return async (input, init) => {
    // Compared before building a Request: that would take over a body meant for upstream.
    if (new URL(input instanceof Request ? input.url : input).host !== inboxHost) {
      return upstream(input, init);
    }
    const request = new Request(input, init);
    // What the tunnel accepts, decoded by node:zlib in steps of 16 KiB (DecompressionStream
    // decodes a chunk whole) and counted, so a small bomb stops at the cap, not at its full size.
    const encoding = contentEncoding(request.headers.get("content-encoding"));
    const wire = Readable.from(request.body ?? []);
    const body = encoding && encoding !== "unsupported" ? wire.pipe(await decoder(encoding)) : wire;
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of body) {
        if ((size += chunk.byteLength) > max) return new Response("too large\n", { status: 413 });
        chunks.push(chunk);
      }
      inbox.add(Buffer.concat(chunks), "browser");
    } catch {
      return new Response("not a Sentry envelope\n", { status: 400 });
    }
    return Response.json({ id: crypto.randomUUID().replaceAll("-", "") });
  };
}

/** The server SDK's transport: no network, straight into the inbox. */
export function inboxTransport(inbox: DevInbox) {
  return (options: BaseTransportOptions) =>
    createTransport(options, ({ body }) => {
      inbox.add(typeof body === "string" ? new TextEncoder().encode(body) : body, "server");
      return Promise.resolve({ statusCode: 200 });
    });
}

/** `GET /_dev/inbox`: the entries, newest first, as a page without script. */
export function inboxPage(inbox: DevInbox): Response {
  const items = inbox.entries.toReversed().map((e) =>
    `<li class="${e.kind}"><div class="meta">${e.kind} from ${e.source}${
      e.traceId ? ` · trace ${escapeHtml(e.traceId)}` : ""
    }</div><b>${escapeHtml(e.title)}</b>${e.stack ? `<pre>${escapeHtml(e.stack)}</pre>` : ""}</li>`
  );
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Monitoring inbox (${items.length})</title>
<style>body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; } li.error { color: #a00; }
.meta { color: #555; font-size: 12px; } pre { margin: .3rem 0; white-space: pre-wrap; }</style>
</head><body><h1>Monitoring inbox</h1>
<p>What the browser and server SDKs reported (errors, transactions, replays, feedback, profiles,
logs), newest first (the last ${inbox.limit}, in memory:
a restart empties it). Set <code>SENTRY_DSN</code> to send to Sentry instead.</p>
<ol>${items.join("\n") || "<p>Nothing yet.</p>"}</ol></body></html>
`;
  // No script at all; the one inline style is the page's own, and all it shows is escaped.
  const csp = { "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'` };
  return answerText(200, "text/html; charset=utf-8", html, csp);
}
