/** The client's address: X-Forwarded-For read only as far as TRUST_PROXY's proxies vouch for it,
 * and only a well-formed IP address taken (it reaches loaders, logs, rate limits and Sentry). */
import { BlockList, isIP } from "node:net";

/** TRUST_PROXY: the nearest `hops` proxies, and any whose address is in `ranges`, are the
 * operator's; `true` is one hop (the proxy the socket comes from), `false` none. */
export type TrustProxy = boolean | { readonly hops: number; readonly ranges?: BlockList };

/** `text` as an IP address (node:net's strict `isIP`: no port, brackets or `127.1`; no zone
 * either), IPv6 in canonical form and an IPv4-mapped one as IPv4; else null. */
export function parseIp(text: string): string | null {
  const family = text.includes("%") ? 0 : isIP(text);
  if (family !== 6) return family === 4 ? text : null;
  // The URL parser canonicalises IPv6 (lower case, `::`, a dotted tail in hex).
  const host = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  return /^::ffff:[0-9a-f]+:[0-9a-f]+$/.test(host) ? ipBytes(host).slice(12).join(".") : host;
}

/** The bytes of an address {@link parseIp} returned: 4 for IPv4, 16 for IPv6. */
export function ipBytes(ip: string): Uint8Array {
  if (!ip.includes(":")) return new Uint8Array(ip.split(".").map(Number));
  const [head, tail = []] = ip.split("::").map((part) => part ? part.split(":") : []);
  const groups = [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail];
  return new Uint8Array(groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255]));
}

/** Addresses and ranges (`10.0.0.0/8`, `2001:db8::/32`) as one list, or the entry that is none. */
export function ipRanges(entries: readonly string[]): BlockList | string {
  const ranges = new BlockList();
  for (const entry of entries) {
    const [address, bits, extra] = entry.split("/");
    const family = parseIp(address) === null ? 0 : isIP(address), max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? +bits : NaN;
    if (!family || extra !== undefined || !(prefix <= max)) return entry;
    ranges.addSubnet(address, prefix, family === 4 ? "ipv4" : "ipv6");
  }
  return ranges;
}

/** Whether the `hop`-th address from the server (0: the socket's peer) is a trusted proxy. */
function trusted(trust: TrustProxy, address: string, hop: number): boolean {
  if (typeof trust === "boolean") return trust && hop === 0;
  const ip = parseIp(address);
  return hop < trust.hops ||
    (!!ip && !!trust.ranges?.check(ip, ip.includes(":") ? "ipv6" : "ipv4"));
}

/** Whether the socket's peer is a trusted proxy, whose X-Forwarded-* headers may be believed. */
export function fromTrustedProxy(info: Deno.ServeHandlerInfo, trust: TrustProxy): boolean {
  return trusted(trust, (info.remoteAddr as Partial<Deno.NetAddr>).hostname ?? "", 0);
}

/** The first untrusted address from the right of X-Forwarded-For (like nginx's
 * `real_ip_recursive`), if it is an IP address; else the socket's peer, "" on a Unix socket. */
export function clientAddress(req: Request, info: Deno.ServeHandlerInfo, trust: TrustProxy) {
  const peer = (info.remoteAddr as Partial<Deno.NetAddr>).hostname ?? "";
  const forwarded = req.headers.get("x-forwarded-for")?.split(",") ?? [];
  let address = peer;
  for (let hop = 0; forwarded.length > 0 && trusted(trust, address, hop); hop++) {
    address = forwarded.pop()!.trim();
  }
  return parseIp(address) ?? peer;
}
