/**
 * Trusted proxies, pure: which socket peers may tell us the client's address in X-Forwarded-For
 * (SERVICE_TRUSTED_PROXIES), and the client address a request then has.
 *
 * The rule (docs/operators.md, "In front of it: a reverse proxy"): the header is believed only
 * when the socket peer is a trusted proxy. It is then read from the right — each proxy appends
 * the address it received the request from — skipping addresses that are themselves trusted
 * proxies; the first one that is not is the client. Everything left of it was written by the
 * client or by proxies we do not know, and is never looked at. An entry that is not an address
 * (empty, garbage, a zone id, too long) ends the walk at the last hop we believed: a proxy we
 * trust wrote it, so nothing further left can be read either. Nothing here throws on a header.
 *
 * Addresses are kept as 16 bytes, IPv4 as its IPv4-mapped IPv6 form (::ffff:a.b.c.d) with a flag,
 * so that `::ffff:10.1.2.3` (how a dual-stack socket shows an IPv4 peer) and `10.1.2.3` are one
 * address. An IPv4 range matches IPv4 addresses only and an IPv6 range IPv6 addresses only: `::/64`
 * does not quietly take in every IPv4 address through the mapped form. The address handed on is
 * in one canonical text (dotted IPv4; RFC 5952 IPv6), so one client is one key for the sign-in
 * throttle however a proxy spelled it.
 */

export interface Address {
  /** 16 bytes; an IPv4 address as ::ffff:a.b.c.d. */
  readonly bytes: Uint8Array;
  readonly v4: boolean;
}

interface Range {
  readonly bytes: Uint8Array;
  /** Prefix length over all 128 bits (an IPv4 /8 is 104). */
  readonly bits: number;
  readonly v4: boolean;
}

/** At most this many hops are walked (a chain of more trusted proxies than this is not a real one). */
export const MAX_HOPS = 32;
/** Longest entry read: "[ffff:…:255.255.255.255]:65535" is 53 characters. */
const MAX_ENTRY_CHARS = 64;

const V4_PART = /^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

function parseV4Into(text: string, out: Uint8Array, at: number): boolean {
  const parts = text.split(".");
  if (parts.length !== 4) return false;
  for (let i = 0; i < 4; i++) {
    // No leading zeros: "010.0.0.1" is octal to some parsers and decimal to others.
    if (!V4_PART.test(parts[i]!)) return false;
    out[at + i] = Number(parts[i]);
  }
  return true;
}

/** Hex groups (the last may be dotted IPv4) into 2-byte groups; undefined when any is not one. */
function groupsOf(text: string, lastMayBeV4: boolean): number[] | undefined {
  if (text === "") return [];
  const parts = text.split(":");
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]!;
    if (lastMayBeV4 && i === parts.length - 1 && p.includes(".")) {
      const b = new Uint8Array(4);
      if (!parseV4Into(p, b, 0)) return undefined;
      groups.push((b[0]! << 8) | b[1]!, (b[2]! << 8) | b[3]!);
    } else if (HEX_GROUP.test(p)) groups.push(parseInt(p, 16));
    else return undefined;
  }
  return groups;
}

function parseV6(text: string): Uint8Array | undefined {
  if (text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text)) return undefined;
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  let groups: number[];
  if (halves.length === 2) {
    const head = groupsOf(halves[0]!, false);
    const tail = groupsOf(halves[1]!, true);
    if (!head || !tail || head.length + tail.length > 7) return undefined;
    groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const all = groupsOf(text, true);
    if (!all || all.length !== 8) return undefined;
    groups = all;
  }
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

const isMapped = (b: Uint8Array) => b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;

/** A bare address, IPv4 or IPv6 (IPv4-mapped included): no brackets, port or zone id. */
export function parseAddress(text: string): Address | undefined {
  if (text.includes(":")) {
    const bytes = parseV6(text);
    return bytes && { bytes, v4: isMapped(bytes) };
  }
  const bytes = new Uint8Array(16);
  bytes[10] = bytes[11] = 0xff;
  return parseV4Into(text, bytes, 12) ? { bytes, v4: true } : undefined;
}

/** Dotted IPv4; IPv6 in RFC 5952 form (lowercase, no leading zeros, the longest zero run as ::). */
export function formatAddress(a: Address): string {
  const b = a.bytes;
  if (a.v4) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`;
  const groups = Array.from({ length: 8 }, (_, i) => (b[2 * i]! << 8) | b[2 * i + 1]!);
  let best = -1;
  let bestLen = 1; // a single zero group is written as 0, not ::
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(":");
  if (best < 0) return hex(groups);
  return `${hex(groups.slice(0, best))}::${hex(groups.slice(best + bestLen))}`;
}

/**
 * One X-Forwarded-For entry: a bare address, `a.b.c.d:port`, `[v6]` or `[v6]:port` (some proxies
 * add the port; it is dropped). Anything else — a zone id, "unknown", an obfuscated RFC 7239
 * name — is not an address.
 */
export function parseHop(raw: string): Address | undefined {
  if (raw.length > MAX_ENTRY_CHARS * 4) return undefined;
  const text = raw.replace(/^[ \t]+|[ \t]+$/g, "");
  if (text === "" || text.length > MAX_ENTRY_CHARS) return undefined;
  const port = (p: string) => /^[0-9]{1,5}$/.test(p) && Number(p) <= 65535;
  const bracketed = /^\[([^\]]*)\](?::([^:]*))?$/.exec(text);
  if (bracketed) {
    if (bracketed[2] !== undefined && !port(bracketed[2])) return undefined;
    return bracketed[1]!.includes(":") ? parseAddress(bracketed[1]!) : undefined;
  }
  const colons = text.split(":").length - 1;
  if (colons === 1) {
    const [host, p] = text.split(":") as [string, string];
    return host.includes(".") && port(p) ? parseAddress(host) : undefined;
  }
  return parseAddress(text);
}

function inRange(a: Address, r: Range): boolean {
  if (a.v4 !== r.v4) return false;
  const full = r.bits >> 3;
  for (let i = 0; i < full; i++) if (a.bytes[i] !== r.bytes[i]) return false;
  const rest = r.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return (a.bytes[full]! & mask) === (r.bytes[full]! & mask);
}

/** The parsed SERVICE_TRUSTED_PROXIES. Empty: nobody is trusted, X-Forwarded-For is never read. */
export class TrustedProxies {
  static readonly NONE = new TrustedProxies([], []);
  private constructor(
    private readonly ranges: readonly Range[],
    /** The entries as given, for messages and the start-up line. */
    readonly entries: readonly string[],
  ) {}

  static of(ranges: readonly Range[], entries: readonly string[]): TrustedProxies {
    return ranges.length === 0 ? TrustedProxies.NONE : new TrustedProxies(ranges, entries);
  }

  get empty(): boolean {
    return this.ranges.length === 0;
  }

  /** Whether a bare address (as in the setting: no port or brackets) is a trusted proxy. */
  isTrusted(addr: string): boolean {
    const a = parseAddress(addr);
    return a !== undefined && this.contains(a);
  }

  contains(a: Address): boolean {
    return this.ranges.some((r) => inRange(a, r));
  }
}

/**
 * "10.0.0.0/8, 127.0.0.1, ::1, fd00::/8" → the matchers, and a line for each entry that is not an
 * address or CIDR (naming it). Empty entries (a trailing comma) are skipped.
 */
export function parseTrustedProxies(text: string): { proxies: TrustedProxies; problems: string[] } {
  const ranges: Range[] = [];
  const entries: string[] = [];
  const problems: string[] = [];
  for (const raw of text.split(",")) {
    const entry = raw.trim();
    if (entry === "") continue;
    const shown = `"${entry.length > 60 ? `${entry.slice(0, 60)}…` : entry}"`;
    const slash = entry.indexOf("/");
    const addrText = slash < 0 ? entry : entry.slice(0, slash);
    const a = parseAddress(addrText);
    if (!a) {
      problems.push(`${shown} is not an IPv4 or IPv6 address or CIDR (like 10.0.0.0/8, 127.0.0.1, fd00::/8; no ports, brackets or zone ids)`);
      continue;
    }
    const written4 = !addrText.includes(":");
    const max = written4 ? 32 : 128;
    let bits = 128;
    if (slash >= 0) {
      const p = entry.slice(slash + 1);
      if (!/^[0-9]{1,3}$/.test(p) || Number(p) > max) {
        problems.push(`${shown}: the prefix length must be a whole number 0..${max}`);
        continue;
      }
      bits = Number(p) + (written4 ? 96 : 0);
    }
    // A mapped range narrower than ::ffff:0:0/96 is a range of IPv4 addresses; a wider one, not.
    const v4 = a.v4 && bits >= 96;
    if ((v4 && bits === 96) || bits === 0) {
      problems.push(`${shown} trusts every ${v4 ? "IPv4" : "IPv6"} address: any client could then forge its address. Name the proxies' own addresses or subnets`);
      continue;
    }
    const masked = maskTo(a.bytes, bits);
    if (!masked.every((x, i) => x === a.bytes[i])) {
      const base = formatAddress({ bytes: masked, v4 });
      problems.push(`${shown} has bits set past its prefix: did you mean ${base}/${v4 ? bits - 96 : bits}?`);
      continue;
    }
    ranges.push({ bytes: masked, bits, v4 });
    entries.push(entry);
  }
  return { proxies: TrustedProxies.of(ranges, entries), problems };
}

function maskTo(bytes: Uint8Array, bits: number): Uint8Array {
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    out[i] = bytes[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/**
 * The client's address: the socket peer, unless the peer is a trusted proxy — then the first
 * address from the right of X-Forwarded-For that is not a trusted proxy (see the top of the file).
 * `xForwardedFor`: the header's value, or each of its values in order when it came more than once
 * (they read as one list, joined by commas). `peer` is as the socket gave it (a zone id is
 * dropped); one that is not an address at all is handed back as it is, trusted for nothing.
 */
export function clientAddressOf(peer: string, xForwardedFor: string | readonly string[] | null | undefined, trusted: TrustedProxies): string {
  const peerAddr = parseAddress(peer.replace(/%.*$/s, ""));
  if (!peerAddr) return peer;
  let last = peerAddr;
  if (trusted.empty || !trusted.contains(peerAddr) || xForwardedFor == null) return formatAddress(last);
  const header = typeof xForwardedFor === "string" ? xForwardedFor : xForwardedFor.join(",");
  // Read from the end, one entry at a time: a long header costs only the hops walked.
  let end = header.length;
  for (let hops = 0; hops < MAX_HOPS; hops++) {
    const start = end === 0 ? -1 : header.lastIndexOf(",", end - 1);
    const hop = parseHop(header.slice(start + 1, end));
    if (!hop) break;
    if (!trusted.contains(hop)) return formatAddress(hop);
    last = hop;
    if (start < 0) break;
    end = start;
  }
  return formatAddress(last);
}
