/**
 * Where a webhook may be sent, as pure address classification (no I/O): every IPv4 and
 * IPv6 address falls in exactly one class, and each environment allows some classes.
 * Production allows only `public`; sandbox too, and also the machine's own and private
 * networks (a merchant testing on localhost) when the operator allows it
 * (SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: otherwise any sandbox key could probe and read the
 * operator's internal services), but never link-local (the cloud metadata service lives
 * there), unspecified, multicast, broadcast or reserved space.
 * IPv6 forms that embed an IPv4 address (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96,
 * 6to4 2002::/16) are judged by the IPv4 address inside.
 */
import type { Environment } from "../../../shared/environment.ts";

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "unique_local"
  | "cgnat"
  | "link_local"
  | "metadata"
  | "unspecified"
  | "multicast"
  | "broadcast"
  | "documentation"
  | "reserved";

const ALLOWED: Record<Environment, ReadonlySet<AddressClass>> = {
  production: new Set(["public"]),
  sandbox: new Set(["public"]),
};
/** The operator's own networks: sandbox only, and only when the operator allows it (SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS). */
export const PRIVATE_CLASSES: ReadonlySet<AddressClass> = new Set(["loopback", "private", "unique_local", "cgnat"]);

export const CLASS_DESCRIPTION: Record<AddressClass, string> = {
  public: "a public address",
  loopback: "a loopback address",
  private: "a private-network address",
  unique_local: "a unique-local IPv6 address (fc00::/7)",
  cgnat: "a carrier-grade NAT address (100.64.0.0/10)",
  link_local: "a link-local address",
  metadata: "a cloud metadata service address",
  unspecified: "the unspecified address",
  multicast: "a multicast address",
  broadcast: "the broadcast address",
  documentation: "a documentation-only address",
  reserved: "a reserved address",
};

export function isAllowedClass(c: AddressClass, environment: Environment, allowPrivate = false): boolean {
  return ALLOWED[environment].has(c) || (environment === "sandbox" && allowPrivate && PRIVATE_CLASSES.has(c));
}

/** The class of an IP address literal, or undefined when `ip` is not one. */
export function classifyAddress(ip: string): AddressClass | undefined {
  const v4 = parseIPv4(ip);
  if (v4) return classifyIPv4(v4);
  const v6 = parseIPv6(ip);
  if (v6) return classifyIPv6(v6);
  return undefined;
}

/** Dotted-quad only (no octal, hex or shortened forms: those never come out of a resolver). */
export function parseIPv4(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out.push(n);
  }
  return out;
}

/** 16 bytes, or undefined. Accepts "::", an embedded dotted quad at the end, and brackets. */
export function parseIPv6(input: string): number[] | undefined {
  let s = input;
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  if (!s.includes(":") || s.includes("%")) return undefined;
  const lastColon = s.lastIndexOf(":");
  const after = s.slice(lastColon + 1);
  if (after.includes(".")) {
    // An embedded dotted quad becomes the last two groups.
    const v4 = parseIPv4(after);
    if (!v4) return undefined;
    s = `${s.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const group = (h: string) => (h === "" ? [] : h.split(":"));
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  const words: number[] = [];
  for (const g of [...head, ...rest]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
  }
  const total = head.length + rest.length;
  if (halves.length === 1 && total !== 8) return undefined;
  if (halves.length === 2 && total > 7) return undefined;
  words.push(...head.map((g) => parseInt(g, 16)));
  if (halves.length === 2) for (let i = 0; i < 8 - total; i++) words.push(0);
  words.push(...rest.map((g) => parseInt(g, 16)));
  if (words.length !== 8) return undefined;
  return words.flatMap((w) => [w >> 8, w & 0xff]);
}

function inV4(a: number[], base: [number, number, number, number], bits: number): boolean {
  const x = ((a[0]! << 24) | (a[1]! << 16) | (a[2]! << 8) | a[3]!) >>> 0;
  const b = ((base[0] << 24) | (base[1] << 16) | (base[2] << 8) | base[3]) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (x & mask) === (b & mask);
}

export function classifyIPv4(a: number[]): AddressClass {
  if (a.join(".") === "169.254.169.254" || a.join(".") === "100.100.100.200") return "metadata";
  if (a.join(".") === "255.255.255.255") return "broadcast";
  if (inV4(a, [0, 0, 0, 0], 8)) return "unspecified";
  if (inV4(a, [127, 0, 0, 0], 8)) return "loopback";
  if (inV4(a, [10, 0, 0, 0], 8) || inV4(a, [172, 16, 0, 0], 12) || inV4(a, [192, 168, 0, 0], 16)) return "private";
  if (inV4(a, [100, 64, 0, 0], 10)) return "cgnat";
  if (inV4(a, [169, 254, 0, 0], 16)) return "link_local";
  if (inV4(a, [192, 0, 2, 0], 24) || inV4(a, [198, 51, 100, 0], 24) || inV4(a, [203, 0, 113, 0], 24)) return "documentation";
  if (inV4(a, [224, 0, 0, 0], 4)) return "multicast";
  if (
    inV4(a, [192, 0, 0, 0], 24) || // IETF protocol assignments
    inV4(a, [192, 88, 99, 0], 24) || // 6to4 relay anycast
    inV4(a, [198, 18, 0, 0], 15) || // benchmarking
    inV4(a, [240, 0, 0, 0], 4) // reserved
  )
    return "reserved";
  return "public";
}

function inV6(b: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3;
    const bit = 7 - (i & 7);
    if (((b[byte]! >> bit) & 1) !== (((prefix[byte] ?? 0) >> bit) & 1)) return false;
  }
  return true;
}

export function classifyIPv6(b: number[]): AddressClass {
  const zeros = (n: number) => b.slice(0, n).every((x) => x === 0);
  if (b.every((x) => x === 0)) return "unspecified";
  if (zeros(15) && b[15] === 1) return "loopback";
  // ::ffff:a.b.c.d (mapped) and 64:ff9b::a.b.c.d (NAT64): the IPv4 address decides.
  if (zeros(10) && b[10] === 0xff && b[11] === 0xff) return classifyIPv4(b.slice(12));
  if (inV6(b, [0x00, 0x64, 0xff, 0x9b], 96)) return classifyIPv4(b.slice(12));
  if (inV6(b, [0x20, 0x02], 16)) return classifyIPv4(b.slice(2, 6));
  if (zeros(12)) return "reserved"; // ::a.b.c.d, IPv4-compatible (deprecated)
  // fd00:ec2::254, the AWS metadata service over IPv6
  if (b.join(",") === [0xfd, 0, 0x0e, 0xc2, ...Array(10).fill(0), 0x02, 0x54].join(",")) return "metadata";
  if (inV6(b, [0xfc], 7)) return "unique_local";
  if (inV6(b, [0xfe, 0x80], 10)) return "link_local";
  if (inV6(b, [0xfe, 0xc0], 10)) return "private"; // site-local (deprecated)
  if (inV6(b, [0xff], 8)) return "multicast";
  if (inV6(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return "documentation";
  if (inV6(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return "private"; // local-use NAT64
  if (inV6(b, [0x01, 0x00], 64)) return "reserved"; // discard-only
  if (inV6(b, [0x20, 0x01], 23)) return "reserved"; // IETF protocol assignments, Teredo
  if (inV6(b, [0x20], 3)) return "public"; // global unicast
  return "reserved";
}
