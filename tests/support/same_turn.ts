/**
 * Running code in the very turn of the event loop in which Deno learns of something that happened
 * on a socket (a peer closing it, say), before any handler of that news has run: the order in
 * which a server meets an ingest's close and its own next request, made repeatable.
 *
 * Which of two sockets' news is handled first in that turn follows the order in which they were
 * opened, so a test opens the trigger before or after the socket it watches to try both orders.
 */

/** A loopback pair of its own that brings `fn` in with the news `act` makes. */
export interface SameTurn extends Disposable {
  /**
   * Call `act` (which makes something happen on a socket), then run `fn` in the turn in which
   * that news arrives: a byte goes over the trigger's pair, and the event loop is kept from
   * running until both have arrived, so one poll sees both.
   */
  run<T>(act: () => void, fn: () => Promise<T>): Promise<T>;
}

/**
 * Open a trigger.
 *
 * @example
 * using turn = await sameTurn();
 * const answer = await turn.run(() => ingestSide.close(), () => client.fetch(url, init));
 */
export async function sameTurn(): Promise<SameTurn> {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const near = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  const far = await listener.accept();
  listener.close();
  let closed = false;
  return {
    async run<T>(act: () => void, fn: () => Promise<T>): Promise<T> {
      const fired = near.read(new Uint8Array(1)).then(fn);
      act();
      const sent = far.write(new Uint8Array([1]));
      const until = performance.now() + 15;
      while (performance.now() < until) { /* both arrive before the loop runs again */ }
      await sent;
      return await fired;
    },
    // Idempotent: a test may hold it under two names.
    [Symbol.dispose]() {
      if (closed) return;
      closed = true;
      near.close();
      far.close();
    },
  };
}
