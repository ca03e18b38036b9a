import assert from "node:assert/strict";
import fc from "fast-check";
import { clientKey, createRateLimiter } from "../../server/rate_limit.ts";

Deno.test("rate limit: a burst up to the limit, then refusals with the wait until a token", () => {
  const limiter = createRateLimiter({ limit: 3, windowMs: 60_000 });
  for (let i = 0; i < 3; i++) assert.deepEqual(limiter.take("a", 0), { allowed: true });
  assert.deepEqual(limiter.take("a", 0), { allowed: false, retryAfterSeconds: 20 });
  // Other clients have their own budget.
  assert.deepEqual(limiter.take("b", 0), { allowed: true });
  // One token comes back every 20 s.
  assert.deepEqual(limiter.take("a", 19_000), { allowed: false, retryAfterSeconds: 1 });
  assert.deepEqual(limiter.take("a", 20_000), { allowed: true });
  assert.equal(limiter.take("a", 20_000).allowed, false);
  // A long pause refills to the limit, never beyond it.
  for (let i = 0; i < 3; i++) assert.equal(limiter.take("a", 10_000_000).allowed, true);
  assert.equal(limiter.take("a", 10_000_000).allowed, false);
});

Deno.test("rate limit: a clock that steps back mints nothing", () => {
  const limiter = createRateLimiter({ limit: 1, windowMs: 1000 });
  assert.equal(limiter.take("a", 5000).allowed, true);
  assert.equal(limiter.take("a", 0).allowed, false);
  assert.equal(limiter.take("a", 5999).allowed, false);
  assert.equal(limiter.take("a", 6000).allowed, true);
});

Deno.test("rate limit: the table never passes its size; a client seen again keeps its budget", () => {
  const limiter = createRateLimiter({ limit: 1, maxClients: 100 });
  assert.equal(limiter.take("busy", 0).allowed, true);
  for (let i = 0; i < 10_000; i++) {
    limiter.take(`flood-${i}`, 0);
    // A client seen again stays in the table (recency), so its budget holds.
    if (i % 50 === 0) assert.equal(limiter.take("busy", 0).allowed, false, String(i));
    assert.ok(limiter.size <= 100);
  }
  // Never refusing everyone: a new client is always let in.
  assert.equal(limiter.take("newcomer", 0).allowed, true);
});

Deno.test("rate limit: a full table keeps the client being limited through a flood of new addresses, at bounded work", () => {
  const limiter = createRateLimiter({ limit: 10, maxClients: 100 });
  for (let i = 0; i < 10; i++) limiter.take("heavy", 0);
  assert.equal(limiter.take("heavy", 0).allowed, false);
  // 100,000 new addresses while the limited client stays quiet (it drifts to the front). The work
  // is counted as the table's entries set: one per take, and those weighed to make room.
  let sets = 0;
  const set = Map.prototype.set;
  Map.prototype.set = function (this: Map<unknown, unknown>, key, value) {
    sets++;
    return set.call(this, key, value);
  };
  try {
    for (let i = 0; i < 100_000; i++) {
      assert.equal(limiter.take(`flood-${i}`, 1).allowed, true);
      assert.ok(limiter.size <= 100);
    }
    assert.equal(limiter.take("heavy", 2).allowed, false, "still limited, not forgotten");
  } finally {
    Map.prototype.set = set;
  }
  // At most a few entries weighed per take, however long the flood.
  assert.ok(sets <= 4 * 100_001, `${sets} entries set`);
  assert.ok(sets >= 100_000 + 2 * (100_000 - 100), "a full table weighs before it forgets");
});

Deno.test("rate limit: property: at most limit + refill per client over any schedule", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 20 }),
      fc.array(fc.tuple(fc.constantFrom("a", "b", "c"), fc.integer({ min: 0, max: 5000 })), {
        maxLength: 300,
      }),
      (limit, steps) => {
        const limiter = createRateLimiter({ limit, windowMs: 1000 });
        let now = 0;
        const allowed = new Map<string, number>();
        for (const [key, advance] of steps) {
          now += advance;
          if (limiter.take(key, now).allowed) allowed.set(key, (allowed.get(key) ?? 0) + 1);
        }
        for (const count of allowed.values()) {
          assert.ok(count <= limit + Math.ceil((now * limit) / 1000));
        }
      },
    ),
  );
});

Deno.test("clientKey: IPv4 as is, IPv6 by /64, mapped IPv4 as IPv4, junk as is", () => {
  assert.equal(clientKey("203.0.113.7"), "203.0.113.7");
  assert.equal(clientKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
  assert.equal(clientKey("2001:0DB8:0001:0002:ffff:1:2:3"), "2001:db8:1:2::/64");
  assert.equal(clientKey("[2001:db8::1]"), "2001:db8:0:0::/64");
  assert.equal(clientKey("fe80::1%eth0"), "fe80:0:0:0::/64");
  assert.equal(clientKey("::ffff:203.0.113.7"), "203.0.113.7");
  assert.equal(clientKey("::1"), "0:0:0:0::/64");
  for (const junk of [":::", "1:2:3", "1::2::3", "g::1", "1:2:3:4:5:6:7:8:9", "::ffff:1.2.3.999"]) {
    assert.equal(clientKey(junk), junk);
  }
  // Every host of one /64 shares a key; the next /64 does not.
  assert.equal(clientKey("2001:db8:0:1::1"), clientKey("2001:db8:0:1:ffff:ffff:ffff:ffff"));
  assert.notEqual(clientKey("2001:db8:0:1::1"), clientKey("2001:db8:0:2::1"));
});
