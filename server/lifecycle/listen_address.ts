/**
 * The listen address as people see it: the URL printed once listening, and why listening on
 * it failed in one line. `Deno.serve` throws an OS error with a stack trace; the mistakes
 * behind it are few, and each line names the one variable to change.
 */
import { StartupError } from "./startup_error.ts";

/** The address the server tried to listen on. */
export interface ListenAddress {
  readonly hostname: string;
  readonly port: number;
}

/**
 * The one-line reason for a listen failure a user can cause, or `undefined` for any other.
 *
 * @example
 * describeListenError(new Deno.errors.AddrInUse("..."), { hostname: "0.0.0.0", port: 8000 });
 * // "PORT: 8000 is already in use on 0.0.0.0 (another process listens on it); ..."
 */
export function describeListenError(error: unknown, address: ListenAddress): string | undefined {
  const { hostname, port } = address;
  if (error instanceof Deno.errors.AddrInUse) {
    return `PORT: ${port} is already in use on ${hostname} (another process listens on it); ` +
      `stop that process or set PORT to a free port`;
  }
  if (error instanceof Deno.errors.AddrNotAvailable) {
    return `HOST: ${hostname} is not an address of this machine; expected one of its own ` +
      `addresses, 0.0.0.0 (all IPv4) or :: (all IPv6)`;
  }
  if (error instanceof Deno.errors.PermissionDenied) {
    return `PORT: the system does not allow this process to listen on port ${port} (ports ` +
      `below 1024 need root or CAP_NET_BIND_SERVICE); set PORT to 1024 or above`;
  }
  if (error instanceof Deno.errors.NotCapable) {
    return `missing permission --allow-net=${formatHost(hostname)}:${port} ` +
      `(needed to listen for requests)`;
  }
  // Deno has no error class for a failed name lookup; its message is stable since 1.x.
  if (error instanceof Error && /failed to lookup address/i.test(error.message)) {
    return `HOST: cannot resolve ${JSON.stringify(hostname)}; expected an IP address of this ` +
      `machine or a name that resolves to one`;
  }
  return undefined;
}

/** A {@link StartupError} for a listen failure a user can cause; any other error unchanged. */
export function explainListenError(error: unknown, address: ListenAddress): unknown {
  const reason = describeListenError(error, address);
  return reason === undefined ? error : new StartupError(reason);
}

/** A host as it appears before `:port`: IPv6 addresses in brackets. */
export function formatHost(hostname: string): string {
  return hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
}

/**
 * The URL to print once listening: the wildcard addresses shown as `localhost` (what a person
 * on this machine can open), IPv6 in brackets.
 *
 * @example
 * listeningUrl({ hostname: "::1", port: 8000 }); // "http://[::1]:8000/"
 */
export function listeningUrl(address: ListenAddress): string {
  const { hostname, port } = address;
  const shown = hostname === "0.0.0.0" || hostname === "::" ? "localhost" : formatHost(hostname);
  return `http://${shown}:${port}/`;
}
