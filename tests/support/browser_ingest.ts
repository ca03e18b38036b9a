/**
 * What the browser suite reads back from the fake ingest: waits for envelope items (by type and
 * content, on the ingest's own arrivals), and the checks every browser error event must pass.
 */
import assert from "node:assert/strict";
import type { Event, SpanJSON } from "@sentry/core";
import type { FakeIngest } from "./fake_ingest.ts";

/** An envelope item as the ingest parsed it. */
type Item = readonly [{ readonly type?: string }, unknown];
/** The envelope item types the browser SDK sends. */
type ItemType =
  | "event"
  | "transaction"
  | "span"
  | "replay_event"
  | "feedback"
  | "profile"
  | "log";

/**
 * The suite's waits on its ingest and its check of a browser error event, which must come from
 * the React SDK with the suite's release and `environment`. `suite` is read only when called.
 */
export function ingestChecks(
  suite: () => { readonly ingest: FakeIngest; readonly release: string },
  environment: string,
  waitMs: number,
) {
  /**
   * Wait until the ingest holds `count` envelope items of `type` whose payloads match, and return
   * them in arrival order. Waits on the ingest's own arrivals rather than sleeping.
   */
  async function waitForItems<T = Event>(
    type: ItemType,
    matches: (payload: T) => boolean,
    count: number,
  ): Promise<T[]> {
    const { ingest } = suite();
    const deadline = Date.now() + waitMs;
    while (true) {
      const envelopes = await ingest.envelopes();
      const items = envelopes.flatMap((envelope) => envelope[1] as readonly Item[]);
      const found = items.filter(([h, p]) => h.type === type && matches(p as T)).map(([, p]) => p);
      if (found.length >= count) return found as T[];
      const left = deadline - Date.now();
      if (left <= 0) {
        const seen = items.map(([h, p]) => `${h.type} ${describeItem(p as Event)}`);
        throw new Error(
          `${found.length} of ${count} matching ${type} items reached the ingest; it has:\n` +
            seen.join("\n"),
        );
      }
      await ingest.waitFor(envelopes.length + 1, "complete", left).catch(() => {});
    }
  }

  /** Wait for the first envelope item of `type` whose payload matches. */
  async function waitForItem<T = Event>(
    type: ItemType,
    matches: (payload: T) => boolean,
  ): Promise<T> {
    return (await waitForItems(type, matches, 1))[0];
  }

  /** Wait for the error event whose exception has this message. */
  function waitForError(message: string): Promise<Event> {
    return waitForItem("event", (e) => exceptionOf(e)?.value === message);
  }

  function assertBrowserError(event: Event): void {
    const { release } = suite();
    assert.equal(event.sdk?.name, "sentry.javascript.react");
    assert.equal(event.release, release);
    assert.equal(event.environment, environment);
    const exception = exceptionOf(event);
    assert.equal(exception?.type, "Error");
    assert.equal(exception?.mechanism?.handled, false);
    assert.ok((exception?.stacktrace?.frames?.length ?? 0) > 0, "the exception has stack frames");
  }

  return { waitForItems, waitForItem, waitForError, assertBrowserError };
}

/** The waits and checks {@link ingestChecks} binds to one suite's ingest. */
export type IngestChecks = ReturnType<typeof ingestChecks>;

/** The CSP reports the browser posted to the ingest's security endpoint. */
export function securityReports(ingest: FakeIngest) {
  return ingest.requests.filter((r) => r.path.startsWith("/api/1/security/"));
}

function describeItem(event: Event): string {
  const span = event as SpanJSON;
  return exceptionOf(event)?.value ?? event.transaction ?? span.op ?? "";
}

/** The event's main exception: Sentry lists linked errors (causes) before it, so it is last. */
export function exceptionOf(event: Event) {
  return event.exception?.values?.at(-1);
}

/** The function names of the main exception's stack frames. */
export function frameFunctions(event: Event): string[] {
  return exceptionOf(event)?.stacktrace?.frames?.map((f) => f.function ?? "") ?? [];
}
