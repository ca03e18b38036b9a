/**
 * The tunnel's log record: one per refused or failed envelope, handed to the app's
 * `log(record, requestId)`, which writes it to the request log (http/request_log.ts) under the
 * id of the request refused.
 */

/** Why one envelope was not delivered. */
export interface TunnelRecord {
  readonly msg: "tunnel";
  /** The one-line reason the client was given. */
  readonly reason: string;
  readonly status: number;
  /** Body size: declared by Content-Length, else as far as it was read. */
  readonly bytes: number;
}
