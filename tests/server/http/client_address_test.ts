import assert from "node:assert/strict";
import {
  clientAddress,
  fromTrustedProxy,
  ipRanges,
  parseIp,
  type TrustProxy,
} from "../../../server/http/client_address.ts";
import { loadConfig } from "../../../server/lifecycle/config.ts";
import { startFakeIngest } from "../../support/fake_ingest.ts";
import {
  buildEnvelope,
  post,
  randomBytes,
  startTunnel,
  test,
} from "../../support/tunnel_upload.ts";

const peer = (hostname: string) =>
  ({ remoteAddr: { transport: "tcp", hostname, port: 1 } }) as Deno.ServeHandlerInfo;
const from = (xff: string) => new Request("http://x/", { headers: { "x-forwarded-for": xff } });
const trust = (value: string): TrustProxy => loadConfig({ TRUST_PROXY: value }).trustProxy;

Deno.test("parseIp: exact IPv4 and IPv6 only, canonical, a mapped IPv4 as IPv4", () => {
  assert.equal(parseIp("203.0.113.7"), "203.0.113.7");
  assert.equal(parseIp("2001:0DB8:0:0::1"), "2001:db8::1");
  assert.equal(parseIp("::ffff:203.0.113.7"), "203.0.113.7");
  assert.equal(parseIp("::1"), "::1");
  for (
    const junk of [
      "dead",
      "::::",
      "...",
      "1.2.3.4:5555",
      "[::1]",
      "fe80::1%eth0",
      "127.1",
      "01.2.3.4",
      "256.1.1.1",
      "1.2.3.4.",
      "0x7f.0.0.1",
      "1::2::3",
      "",
      " 1.2.3.4",
    ]
  ) assert.equal(parseIp(junk), null, junk);
});

Deno.test("ipRanges: addresses and prefixes, IPv4 and IPv6; the first entry that is none", () => {
  const ranges = ipRanges(["10.0.0.0/8", "2001:db8::/32", "192.0.2.7"]);
  assert.ok(typeof ranges !== "string");
  const has = (ip: string) => ranges.check(ip, ip.includes(":") ? "ipv6" : "ipv4");
  assert.deepEqual(
    ["10.255.0.1", "11.0.0.1", "2001:db8:ffff::1", "2001:db9::1", "192.0.2.7", "192.0.2.8"].map(
      has,
    ),
    [true, false, true, false, true, false],
  );
  for (
    const junk of [
      "10.0.0.0/33",
      "::/129",
      "10.0.0.0/",
      "10.0.0.0/8/8",
      "x/8",
      "10/8",
      "fe80::1%eth0",
    ]
  ) {
    assert.equal(ipRanges(["10.0.0.0/8", junk]), junk);
  }
});

Deno.test("TRUST_PROXY: true/false, a hop count, or addresses and ranges; junk stops start-up", () => {
  assert.equal(trust("true"), true);
  assert.equal(trust("off"), false);
  assert.deepEqual(trust("2"), { hops: 2 });
  assert.equal((trust("10.0.0.0/8, 2001:db8::/32") as { hops: number }).hops, 0);
  assert.throws(() => trust("10.0.0.0/8, dead"), /TRUST_PROXY: expected true, false, a hop count/);
  assert.throws(() => trust("33"), /TRUST_PROXY/);
});

Deno.test("clientAddress: the first untrusted entry from the right, if it is an IP address", () => {
  const socket = peer("10.0.0.1");
  // The client sent the first entry; the proxy appended the address it saw.
  const req = from("198.51.100.9, 203.0.113.7");
  assert.equal(clientAddress(req, socket, false), "10.0.0.1");
  assert.equal(clientAddress(req, socket, true), "203.0.113.7");
  assert.equal(clientAddress(req, socket, trust("1")), "203.0.113.7");
  assert.equal(clientAddress(req, socket, trust("2")), "198.51.100.9");
  // Fewer entries than hops: the furthest one.
  assert.equal(clientAddress(req, socket, trust("5")), "198.51.100.9");
  assert.equal(clientAddress(from(" 2001:DB8::1 "), socket, true), "2001:db8::1");
  for (
    const forged of ["<script>", "203.0.113.7, <script>", "203.0.113.7,", "", "dead, 1.2.3.4:5555"]
  ) {
    assert.equal(clientAddress(from(forged), socket, true), "10.0.0.1", forged);
  }
  // By address: a CDN's edges (203.0.113.0/24) in front of nginx (10.0.0.0/8).
  const cdn = trust("10.0.0.0/8, 203.0.113.0/24");
  const chain = from("192.0.2.1, 198.51.100.9, 203.0.113.7");
  assert.equal(clientAddress(chain, socket, cdn), "198.51.100.9");
  // A peer outside the list is the client itself, whatever it writes.
  assert.equal(clientAddress(chain, peer("192.0.2.50"), cdn), "192.0.2.50");
  assert.equal(clientAddress(chain, peer("::ffff:10.0.0.1"), cdn), "198.51.100.9");
  const unix = { remoteAddr: { transport: "unix", path: "/tmp/s" } } as Deno.ServeHandlerInfo;
  assert.equal(clientAddress(new Request("http://x/"), unix, true), "");
});

Deno.test("fromTrustedProxy: X-Forwarded-Proto believed from a trusted peer only", () => {
  assert.equal(fromTrustedProxy(peer("10.0.0.1"), true), true);
  assert.equal(fromTrustedProxy(peer("10.0.0.1"), false), false);
  assert.equal(fromTrustedProxy(peer("10.0.0.1"), trust("10.0.0.0/8")), true);
  assert.equal(fromTrustedProxy(peer("10.1.0.1"), trust("10.0.0.0/16")), false);
});

test("over sockets: a forged entry is neither the client nor forwarded; behind two trusted proxies the client's address is the key", async () => {
  await using ingest = startFakeIngest();
  const envelope = () => buildEnvelope(ingest.dsn(), randomBytes(10));
  {
    await using tunnel = startTunnel([ingest.dsn()], { trustProxy: true });
    const answer = await post(tunnel.url, envelope(), { "x-forwarded-for": "dead, 1.2.3.4:5555" });
    assert.equal(answer.status, 200);
    assert.equal(await tunnel.delivery.flush(10_000), true); // sent before the queue closes
  }
  {
    // A CDN edge, then nginx on 127.0.0.1: two hops; one envelope per client a minute.
    await using tunnel = startTunnel([ingest.dsn()], { trustProxy: trust("2"), rateLimit: 1 });
    const statuses = [];
    for (
      const xff of [
        "203.0.113.7, 198.51.100.1",
        "203.0.113.7, 198.51.100.2",
        "192.0.2.9, 198.51.100.1",
      ]
    ) {
      statuses.push((await post(tunnel.url, envelope(), { "x-forwarded-for": xff })).status);
    }
    // The same client through another edge is limited; another client through the same edge not.
    assert.deepEqual(statuses, [200, 429, 200]);
    assert.equal(await tunnel.delivery.flush(10_000), true);
  }
  // Sorted: the queue sends several at once, so arrival order may differ from the posts'.
  const forwardedFor = ingest.requests.map((r) => r.headers.get("x-sentry-forwarded-for"));
  assert.deepEqual(forwardedFor.toSorted(), ["127.0.0.1", "192.0.2.9", "203.0.113.7"]);
});
