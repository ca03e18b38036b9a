/**
 * Opening a connection to an ingest, plain or TLS, for the tunnel's client and the envelope
 * pipeline.
 */

/** Where an ingest listens. */
export interface Endpoint {
  readonly tls: boolean;
  readonly hostname: string;
  readonly port: number;
}

/** Connect, giving up at once when `signal` aborts (a connection made later is closed). */
export function connect(
  target: Endpoint,
  signal: AbortSignal | null,
  caCerts: readonly string[] | undefined,
): Promise<Deno.Conn> {
  const { hostname, port } = target;
  if (!target.tls) return Deno.connect({ hostname, port, signal: signal ?? undefined });
  const connecting = Deno.connectTls({
    hostname,
    port,
    caCerts: caCerts && [...caCerts],
  });
  if (signal === null) return connecting;
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    connecting.then((conn) => {
      signal.removeEventListener("abort", onAbort);
      if (signal.aborted) conn.close();
      else resolve(conn);
    }, reject);
  });
}
