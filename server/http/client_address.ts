/** The client's address: X-Forwarded-For read only as far as TRUST_PROXY's proxies vouch for it,
 * and only a well-formed IP address taken (it reaches loaders, logs, rate limits and Sentry). */

/** An address range, `10.0.0.0/8` or `2001:db8::/32` (a lone address is its own range). */
export type IpRange = { readonly bytes: Uint8Array; readonly bits: number };

/** TRUST_PROXY: the nearest `hops` proxies, and any whose address is in `ranges`, are the
 * operator's; `true` is one hop (the proxy the socket comes from), `false` none. */
export type TrustProxy = boolean | { readonly hops: number; readonly ranges: readonly IpRange[] };

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?!$)|$)){4}$/;

/** `text` as an IP address in canonical form (an IPv4-mapped IPv6 as IPv4), or null unless it is
 * exactly one: no port, brackets, zone, or shorthand like `127.1`. */
export function parseIp(text: string): string | null {
  if (IPV4.test(text)) return text;
  // The URL parser validates and canonicalises IPv6 (lower case, `::`, a dotted tail in hex).
  if (!/^[0-9a-f:.]*:[0-9a-f:.]*$/i.test(text)) return null;
  const host = URL.parse(`http://[${text}]/`)?.hostname.slice(1, -1);
  const mapped = host && /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (!mapped) return host || null;
  const [high, low] = mapped.slice(1).map((group) => parseInt(group, 16));
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** The bytes of an address {@link parseIp} returned: 4 for IPv4, 16 for IPv6. */
export function ipBytes(ip: string): Uint8Array {
  if (!ip.includes(":")) return new Uint8Array(ip.split(".").map(Number));
  const [head, tail = []] = ip.split("::").map((part) => part ? part.split(":") : []);
  const groups = [...head, ...Array(8 - head.length - tail.length).fill("0"), ...tail];
  return new Uint8Array(groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 255]));
}

/** `10.0.0.0/8`, `2001:db8::/32` or one address as a range, or null if it is none. */
export function parseIpRange(text: string): IpRange | null {
  const [address, prefix, extra] = text.split("/");
  const ip = parseIp(address);
  if (ip === null || extra !== undefined) return null;
  const bytes = ipBytes(ip);
  const bits = prefix === undefined ? bytes.length * 8 : /^\d{1,3}$/.test(prefix) ? +prefix : NaN;
  return bits <= bytes.length * 8 ? { bytes, bits } : null;
}

function inRange(ip: string | null, { bytes, bits }: IpRange): boolean {
  const address = ip === null ? null : ipBytes(ip);
  if (address?.length !== bytes.length) return false;
  const whole = bits >> 3, rest = bits & 7, mask = (0xff00 >> rest) & 0xff;
  return address.subarray(0, whole).every((b, i) => b === bytes[i]) &&
    (rest === 0 || (address[whole] & mask) === (bytes[whole] & mask));
}

/** Whether the `hop`-th address from the server (0: the socket's peer) is a trusted proxy. */
function trusted(trust: TrustProxy, address: string, hop: number): boolean {
  if (typeof trust === "boolean") return trust && hop === 0;
  return hop < trust.hops || trust.ranges.some((range) => inRange(parseIp(address), range));
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
