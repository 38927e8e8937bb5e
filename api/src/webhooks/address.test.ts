import { expect, test } from "bun:test";
import { classifyAddress, isAllowedClass, parseIPv6, type AddressClass } from "./address.ts";

const CASES: [string, AddressClass][] = [
  ["8.8.8.8", "public"],
  ["1.1.1.1", "public"],
  ["93.184.215.14", "public"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["10.0.0.1", "private"],
  ["172.16.0.1", "private"],
  ["172.31.255.255", "private"],
  ["172.32.0.1", "public"],
  ["192.168.1.1", "private"],
  ["100.64.0.1", "cgnat"],
  ["100.127.255.255", "cgnat"],
  ["100.128.0.1", "public"],
  ["169.254.169.254", "metadata"],
  ["100.100.100.200", "metadata"],
  ["169.254.1.1", "link_local"],
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "unspecified"],
  ["224.0.0.1", "multicast"],
  ["239.255.255.250", "multicast"],
  ["255.255.255.255", "broadcast"],
  ["240.0.0.1", "reserved"],
  ["198.18.0.1", "reserved"],
  ["192.0.0.8", "reserved"],
  ["192.0.2.1", "documentation"],
  ["203.0.113.9", "documentation"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["[::1]", "loopback"],
  ["0:0:0:0:0:0:0:1", "loopback"],
  ["::ffff:127.0.0.1", "loopback"],
  ["::ffff:7f00:1", "loopback"],
  ["::ffff:10.1.2.3", "private"],
  ["::ffff:169.254.169.254", "metadata"],
  ["::ffff:8.8.8.8", "public"],
  ["64:ff9b::192.168.0.1", "private"],
  ["64:ff9b::8.8.8.8", "public"],
  ["2002:c0a8:0101::1", "private"],
  ["2002:0808:0808::1", "public"],
  ["::10.0.0.1", "reserved"],
  ["fc00::1", "unique_local"],
  ["fd12:3456::1", "unique_local"],
  ["fd00:ec2::254", "metadata"],
  ["fe80::1", "link_local"],
  ["febf::1", "link_local"],
  ["fec0::1", "private"],
  ["ff02::1", "multicast"],
  ["2001:db8::1", "documentation"],
  ["2001::1", "reserved"],
  ["100::1", "reserved"],
  ["2606:4700:4700::1111", "public"],
  ["2a00:1450:4001:80b::200e", "public"],
  ["4000::1", "reserved"],
];

test("every address class, IPv4 and IPv6, mapped and embedded forms included", () => {
  const wrong = CASES.filter(([ip, c]) => classifyAddress(ip) !== c).map(([ip, c]) => `${ip}: ${classifyAddress(ip)} (expected ${c})`);
  expect(wrong).toEqual([]);
});

test("not addresses: host names, octal, short forms, junk", () => {
  for (const s of ["localhost", "example.com", "010.0.0.1", "127.1", "0x7f.0.0.1", "256.0.0.1", "1.2.3", "1.2.3.4.5", "1::2::3", "1:2:3:4:5:6:7:8:9", "fe80::1%eth0", "::g", "", ":::"]) {
    expect(classifyAddress(s)).toBeUndefined();
  }
  expect(parseIPv6("1:2:3:4:5:6:7:8")).toEqual([0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0, 7, 0, 8]);
});

test("production allows only public addresses; sandbox too, and local and private ones when the operator allows, never metadata or link-local", () => {
  for (const allowPrivate of [false, true]) {
    expect(isAllowedClass("public", "production", allowPrivate)).toBe(true);
    for (const c of ["loopback", "private", "unique_local", "cgnat", "link_local", "metadata", "unspecified", "multicast", "broadcast", "reserved", "documentation"] as const) {
      expect(isAllowedClass(c, "production", allowPrivate)).toBe(false);
    }
    expect(isAllowedClass("public", "sandbox", allowPrivate)).toBe(true);
    for (const c of ["loopback", "private", "unique_local", "cgnat"] as const) expect(isAllowedClass(c, "sandbox", allowPrivate)).toBe(allowPrivate);
    for (const c of ["link_local", "metadata", "unspecified", "multicast", "broadcast", "reserved", "documentation"] as const) {
      expect(isAllowedClass(c, "sandbox", allowPrivate)).toBe(false);
    }
  }
  expect(isAllowedClass("loopback", "sandbox")).toBe(false); // off unless asked for
});
