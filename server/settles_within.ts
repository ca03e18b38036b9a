/**
 * Waiting for something with a bound, without leaving a timer behind: shutdown waits for the
 * requests in flight, monitoring's flush for the envelopes it handed over.
 */

/**
 * Whether `promise` settles (fulfils or rejects) within `timeoutMs`. The timer is cleared as
 * soon as it does, so nothing is left running after the answer.
 *
 * @example
 * await settlesWithin(server.finished, 2_000); // false if still running after 2 s
 */
export async function settlesWithin(promise: PromiseLike<unknown>, timeoutMs: number) {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => timer = setTimeout(() => resolve(false), timeoutMs));
  const settled = Promise.resolve(promise).then(() => true, () => true);
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}
