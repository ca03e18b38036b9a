/**
 * The tunnel's log record: one line per refused or failed envelope, written through the app's
 * batched request log with the request's id, so a flood of refusals never blocks on stderr.
 */
import type { LogFormat } from "../http/request_log.ts";

/** Why one envelope was not delivered. */
export interface TunnelRecord {
  readonly msg: "tunnel";
  /** The one-line reason the client was given. */
  readonly reason: string;
  readonly status: number;
  /** Body size: declared by Content-Length, else as far as it was read. */
  readonly bytes: number;
}

/**
 * Format a record as one line (no newline), JSON or text like the request log.
 *
 * @example
 * formatTunnelRecord({ msg: "tunnel", reason: "x", status: 400, bytes: 9 }, "r-1", "text");
 * // '2026-01-01T00:00:00.000Z tunnel 400 9B r-1 "x"'
 */
export function formatTunnelRecord(
  record: TunnelRecord,
  requestId: string | undefined,
  format: LogFormat,
  time: string = new Date().toISOString(),
): string {
  const id = requestId ?? "-";
  if (format === "json") return JSON.stringify({ time, ...record, requestId: id });
  return `${time} tunnel ${record.status} ${record.bytes}B ${id} ${JSON.stringify(record.reason)}`;
}
