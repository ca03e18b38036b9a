/** Refusals logged as counts (nginx's `limit_req_log_level` only lowers their level): a client
 * refused 20,000 times a second costs two lines an interval, not 20,000. The clock is a parameter. */
import { formatRefusal, type LogFormat } from "./request_log.ts";

/** Clients, statuses and reasons told apart per interval (about 100 lines); the rest are summed
 * as one "others" per status, however many addresses a flood comes from. */
const MAX_KEYS = 50;

/** Why a request was refused, as what refused it says, and how much of its body was read. */
export type Refusal = { reason: string; bytes?: number };
/** What one line says: `count` refusals alike. */
export type RefusalLine = Refusal & { status: number; client: string; count: number };

/** The first refusal of each client, status and reason in an interval is a line at once; the
 * rest are counted into one line, written by the first refusal or `flushDue()` after it ends. */
export function createRefusalLog(
  write: (line: string) => void,
  format: LogFormat,
  // Long enough to bound a flood, short enough to read it as it happens.
  { intervalMs = 10_000, now = () => performance.now() } = {},
) {
  let repeats = new Map<string, RefusalLine>();
  let since = 0;
  const flushDue = () => {
    if (repeats.size === 0 || now() - since < intervalMs) return;
    for (const line of repeats.values()) {
      if (line.count > 0) write(formatRefusal(line, "-", format));
    }
    repeats = new Map();
  };
  return {
    flushDue,
    /** Count one refused request of `client`. */
    refused(client: string, status: number, { reason, bytes }: Refusal, requestId: string) {
      flushDue();
      if (repeats.size === 0) since = now();
      let key = `${status} ${client} ${reason}`;
      if (!repeats.has(key) && repeats.size >= MAX_KEYS) {
        [client, reason, key] = ["others", "(various)", `${status} others`];
      }
      const seen = repeats.get(key);
      if (seen === undefined) {
        repeats.set(key, { status, reason, client, count: 0, bytes });
        return write(formatRefusal({ status, reason, client, count: 1, bytes }, requestId, format));
      }
      seen.count++;
      if (bytes !== undefined) seen.bytes = Math.max(seen.bytes ?? 0, bytes);
    },
  };
}
