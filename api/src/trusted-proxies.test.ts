import { describe, expect, test } from "bun:test";
import { clientAddressOf, formatAddress, MAX_HOPS, parseAddress, parseHop, parseTrustedProxies, TrustedProxies } from "./trusted-proxies.ts";

const proxies = (text: string): TrustedProxies => {
  const { proxies, problems } = parseTrustedProxies(text);
  expect(problems).toEqual([]);
  return proxies;
};
const canon = (text: string) => {
  const a = parseAddress(text);
  return a && formatAddress(a);
};

describe("addresses", () => {
  test("IPv4: dotted decimal only, no leading zeros, each part 0..255", () => {
    expect(canon("203.0.113.7")).toBe("203.0.113.7");
    expect(canon("0.0.0.0")).toBe("0.0.0.0");
    expect(canon("255.255.255.255")).toBe("255.255.255.255");
    for (const bad of ["256.0.0.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.-4", "1.2.3.4 ", "0x7f.0.0.1", "127.1", "1..2.3", "", "a.b.c.d", "١.٢.٣.٤"]) {
      expect(parseAddress(bad), bad).toBeUndefined();
    }
  });

  test("IPv6: every spelling of one address gives one canonical text (RFC 5952)", () => {
    expect(canon("2001:0DB8:0000:0000:0000:0000:0000:0001")).toBe("2001:db8::1");
    expect(canon("2001:db8::1")).toBe("2001:db8::1");
    expect(canon("::1")).toBe("::1");
    expect(canon("::")).toBe("::");
    expect(canon("1::")).toBe("1::");
    expect(canon("2001:db8:0:1:1:1:1:1")).toBe("2001:db8:0:1:1:1:1:1"); // one zero group stays 0
    expect(canon("2001:0:0:1:0:0:0:1")).toBe("2001:0:0:1::1"); // the longest run is compressed
    expect(canon("2001:db8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1"); // on a tie, the first
    expect(canon("1:2:3:4:5:6:7::")).toBe("1:2:3:4:5:6:7:0");
    expect(canon("::ffff:1.2.3.4")).toBe("1.2.3.4"); // IPv4-mapped is IPv4
    expect(canon("::FFFF:0102:0304")).toBe("1.2.3.4");
    expect(canon("64:ff9b::1.2.3.4")).toBe("64:ff9b::102:304"); // embedded, but not mapped
    for (const bad of ["1:2:3:4:5:6:7:8:9", "1::2::3", ":1::2", "1:2:3:4:5:6:7", "12345::1", "::g", "fe80::1%eth0", "[::1]", "1:2:3:4:5:6:7:8::", "::1.2.3.4.5", "1.2.3.4::", ":::"]) {
      expect(parseAddress(bad), bad).toBeUndefined();
    }
  });

  test("an X-Forwarded-For entry may carry a port or brackets (dropped), never a zone id", () => {
    expect(formatAddress(parseHop(" 203.0.113.7:51234\t")!)).toBe("203.0.113.7");
    expect(formatAddress(parseHop("[2001:db8::7]")!)).toBe("2001:db8::7");
    expect(formatAddress(parseHop("[2001:db8::7]:443")!)).toBe("2001:db8::7");
    expect(formatAddress(parseHop("[::ffff:203.0.113.7]:1")!)).toBe("203.0.113.7");
    for (const bad of ["", "   ", "unknown", "_hidden", "203.0.113.7:", "203.0.113.7:65536", "203.0.113.7:port", "[203.0.113.7]", "[2001:db8::7", "[2001:db8::7]:", "[2001:db8::7]:1:2", "fe80::1%eth0", "[fe80::1%25eth0]:80", "1.2.3.4 5.6.7.8", "x".repeat(100_000), `  ${"1".repeat(300)}`]) {
      expect(parseHop(bad), bad.slice(0, 40)).toBeUndefined();
    }
  });
});

describe("the setting", () => {
  test("addresses and CIDRs of both families; IPv4-mapped and plain IPv4 match alike", () => {
    const t = proxies(" 10.0.0.0/8, 127.0.0.1 ,::1, fd00::/8, 192.168.1.128/25, ::ffff:172.16.0.0/108,");
    expect(t.entries).toEqual(["10.0.0.0/8", "127.0.0.1", "::1", "fd00::/8", "192.168.1.128/25", "::ffff:172.16.0.0/108"]);
    for (const yes of ["10.0.0.1", "10.255.255.255", "::ffff:10.9.9.9", "127.0.0.1", "::ffff:127.0.0.1", "::1", "fd12:3456::1", "192.168.1.200", "172.16.0.1", "172.31.255.255"]) {
      expect(t.isTrusted(yes), yes).toBe(true);
    }
    for (const no of ["11.0.0.1", "127.0.0.2", "::2", "fe00::1", "192.168.1.127", "172.32.0.0", "203.0.113.7", "garbage", "", "10.0.0.1:80"]) {
      expect(t.isTrusted(no), no).toBe(false);
    }
  });

  test("an IPv6 range never takes in IPv4 addresses through their mapped form", () => {
    const t = proxies("::/64");
    expect(t.isTrusted("::5")).toBe(true);
    expect(t.isTrusted("10.0.0.1")).toBe(false);
    expect(t.isTrusted("::ffff:10.0.0.1")).toBe(false);
  });

  test("empty: nobody is trusted", () => {
    expect(proxies("").empty).toBe(true);
    expect(proxies(" , ").empty).toBe(true);
    expect(TrustedProxies.NONE.isTrusted("127.0.0.1")).toBe(false);
  });

  test("each bad entry is named, the good ones still parsed", () => {
    const { proxies: t, problems } = parseTrustedProxies("10.0.0.0/33, 127.0.0.1, localhost, ::1/129, 10.0.0.1/8, fe80::1%eth0, 1.2.3.4/x, 0.0.0.0/0, ::/0, ::ffff:0:0/96, [::1], 10.0.0.0/ 8");
    expect(t.entries).toEqual(["127.0.0.1"]);
    expect(problems).toEqual([
      `"10.0.0.0/33": the prefix length must be a whole number 0..32`,
      `"localhost" is not an IPv4 or IPv6 address or CIDR (like 10.0.0.0/8, 127.0.0.1, fd00::/8; no ports, brackets or zone ids)`,
      `"::1/129": the prefix length must be a whole number 0..128`,
      `"10.0.0.1/8" has bits set past its prefix: did you mean 10.0.0.0/8?`,
      `"fe80::1%eth0" is not an IPv4 or IPv6 address or CIDR (like 10.0.0.0/8, 127.0.0.1, fd00::/8; no ports, brackets or zone ids)`,
      `"1.2.3.4/x": the prefix length must be a whole number 0..32`,
      `"0.0.0.0/0" trusts every IPv4 address: any client could then forge its address. Name the proxies' own addresses or subnets`,
      `"::/0" trusts every IPv6 address: any client could then forge its address. Name the proxies' own addresses or subnets`,
      `"::ffff:0:0/96" trusts every IPv4 address: any client could then forge its address. Name the proxies' own addresses or subnets`,
      `"[::1]" is not an IPv4 or IPv6 address or CIDR (like 10.0.0.0/8, 127.0.0.1, fd00::/8; no ports, brackets or zone ids)`,
      `"10.0.0.0/ 8": the prefix length must be a whole number 0..32`,
    ]);
  });

  test("a very long bad entry is shown shortened", () => {
    const { problems } = parseTrustedProxies("x".repeat(10_000));
    expect(problems).toHaveLength(1);
    expect(problems[0]!.length).toBeLessThan(200);
  });
});

describe("the client address (right to left)", () => {
  const lb = proxies("10.0.0.0/8, 127.0.0.1, ::1");

  test("no trusted proxies: the peer, whatever the header says", () => {
    expect(clientAddressOf("127.0.0.1", "203.0.113.7", TrustedProxies.NONE)).toBe("127.0.0.1");
    expect(clientAddressOf("::ffff:127.0.0.1", "203.0.113.7", TrustedProxies.NONE)).toBe("127.0.0.1");
  });

  test("an untrusted peer's X-Forwarded-For is ignored (a spoof sent straight to the port)", () => {
    expect(clientAddressOf("198.51.100.9", "203.0.113.7", lb)).toBe("198.51.100.9");
    expect(clientAddressOf("198.51.100.9", "10.0.0.1, 127.0.0.1", lb)).toBe("198.51.100.9");
  });

  test("a trusted peer: its last entry is the client", () => {
    expect(clientAddressOf("127.0.0.1", "203.0.113.7", lb)).toBe("203.0.113.7");
    expect(clientAddressOf("::ffff:10.1.2.3", "203.0.113.7", lb)).toBe("203.0.113.7");
    expect(clientAddressOf("::1", "2001:DB8:0::7", lb)).toBe("2001:db8::7");
  });

  test("trusted hops are skipped; entries a client wrote before the chain are never read", () => {
    // The client sent "X-Forwarded-For: 1.1.1.1, 10.0.0.5"; the edge proxy appended the client, the inner one the edge.
    expect(clientAddressOf("10.0.0.2", "1.1.1.1, 10.0.0.5, 198.51.100.9, 10.0.0.1", lb)).toBe("198.51.100.9");
    expect(clientAddressOf("10.0.0.2", "garbage, <script>, 198.51.100.9", lb)).toBe("198.51.100.9");
  });

  test("several X-Forwarded-For headers read as one list, in order", () => {
    expect(clientAddressOf("10.0.0.2", ["1.1.1.1", "198.51.100.9, 10.0.0.1"], lb)).toBe("198.51.100.9");
    expect(clientAddressOf("10.0.0.2", ["198.51.100.9", "10.0.0.1"], lb)).toBe("198.51.100.9");
    expect(clientAddressOf("10.0.0.2", ["198.51.100.9", "203.0.113.7"], lb)).toBe("203.0.113.7");
  });

  test("no header, or only trusted hops: the last trusted hop", () => {
    expect(clientAddressOf("10.0.0.2", null, lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", undefined, lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", [], lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", "10.0.0.3, 10.0.0.1", lb)).toBe("10.0.0.3");
  });

  test("a malformed entry stops the walk at the last hop believed: garbage is never believed", () => {
    expect(clientAddressOf("10.0.0.2", "garbage", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", "", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", "  ", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", ",", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", "198.51.100.9, garbage", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", "198.51.100.9, , 10.0.0.1", lb)).toBe("10.0.0.1");
    expect(clientAddressOf("10.0.0.2", "198.51.100.9,10.0.0.1,", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", ",10.0.0.1", lb)).toBe("10.0.0.1");
    expect(clientAddressOf("10.0.0.2", "fe80::1%eth0", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", "198.51.100.9\r\n", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", "unknown", lb)).toBe("10.0.0.2");
    expect(clientAddressOf("10.0.0.2", "x".repeat(100_000), lb)).toBe("10.0.0.2");
  });

  test("ports and brackets a proxy added are dropped", () => {
    expect(clientAddressOf("10.0.0.2", "203.0.113.7:51234", lb)).toBe("203.0.113.7");
    expect(clientAddressOf("10.0.0.2", "[2001:db8::7]:443, 10.0.0.1:80", lb)).toBe("2001:db8::7");
  });

  test("10 000 entries: a client padding the header reaches nothing it wrote, and the walk stays short", () => {
    const padding = Array.from({ length: 10_000 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`).join(", ");
    // Its own entries are trusted-looking (10.x), but the proxy's entry for it comes last.
    expect(clientAddressOf("10.0.0.2", `${padding}, 198.51.100.9`, lb)).toBe("198.51.100.9");
    // All trusted-looking: the walk stops after MAX_HOPS, at a hop, never reading to the start.
    const t0 = performance.now();
    const got = clientAddressOf("10.0.0.2", padding, lb);
    expect(performance.now() - t0).toBeLessThan(50);
    expect(got).toBe(`10.0.${((10_000 - MAX_HOPS) >> 8) & 255}.${(10_000 - MAX_HOPS) & 255}`);
    expect(clientAddressOf("10.0.0.2", Array(10_000).fill("garbage").join(","), lb)).toBe("10.0.0.2");
  });

  test("the peer: a zone id is dropped, one that is no address is kept as given and trusted for nothing", () => {
    const ll = proxies("fe80::/10");
    expect(clientAddressOf("fe80::1%eth0", "203.0.113.7", ll)).toBe("203.0.113.7");
    expect(clientAddressOf("fe80::1%2", null, ll)).toBe("fe80::1");
    expect(clientAddressOf("not-an-ip", "203.0.113.7", proxies("127.0.0.1"))).toBe("not-an-ip");
  });

  test("never throws, whatever the header holds", () => {
    const weird = ["\u0000", "\uffff,\ud800", ",".repeat(50_000), "[", "]", ":", "::::", "1.2.3.4:99999", "[]:1", "%", "/", "10.0.0.0/8"];
    for (const w of weird) expect(() => clientAddressOf("10.0.0.2", w, lb)).not.toThrow();
    expect(clientAddressOf("10.0.0.2", "10.0.0.0/8", lb)).toBe("10.0.0.2");
  });
});
