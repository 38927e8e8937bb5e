/**
 * Webhook targets: what URL may be saved, and which addresses it may be sent to.
 * The shape rules are pure (`checkUrl`); `resolveTarget` adds DNS, through a resolver
 * that tests can replace. Both run when an endpoint is saved (a bad URL is a clear 4xx)
 * and again before every delivery, whose connection then goes to the very address that
 * was checked (sender.ts), so a DNS answer that changes in between (rebinding) cannot
 * point a delivery at a private address.
 */
import { lookup } from "node:dns/promises";
import type { Environment } from "../../../shared/environment.ts";
import { CLASS_DESCRIPTION, classifyAddress, isAllowedClass, parseIPv4, parseIPv6, PRIVATE_CLASSES } from "./address.ts";
import { BaseError } from "../../../shared/base-error.ts";

export const MAX_URL_LENGTH = 2048;

export type TargetErrorCode = "url_invalid" | "url_https_required" | "url_address_forbidden" | "url_unresolvable";

export class TargetError extends BaseError {
  override name = "TargetError";
  constructor(
    readonly code: TargetErrorCode,
    message: string,
    opts: { cause?: unknown } = {},
  ) {
    super(message, opts);
  }
}

export interface CheckedUrl {
  url: URL;
  /** Host name without brackets (an IPv6 literal is bare). */
  host: string;
  /** Set when the host is an IP literal (or `localhost`): no DNS needed. */
  literal?: string[];
}

/** Pure shape rules; throws TargetError. */
export function checkUrl(raw: string, environment: Environment): CheckedUrl {
  if (raw.length > MAX_URL_LENGTH) throw new TargetError("url_invalid", `url must be at most ${MAX_URL_LENGTH} characters.`);
  if (/[\u0000-\u0020\u007f]/.test(raw)) throw new TargetError("url_invalid", "url must not contain spaces or control characters.");
  let url: URL;
  try {
    url = new URL(raw);
  } catch (e) {
    throw new TargetError("url_invalid", "url must be an absolute URL such as https://example.com/webhooks.", { cause: e });
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new TargetError("url_invalid", "url must start with https:// (or http:// in sandbox).");
  }
  if (environment === "production" && url.protocol !== "https:") {
    throw new TargetError("url_https_required", "Production webhook URLs must use https://.");
  }
  if (url.username || url.password) throw new TargetError("url_invalid", "url must not contain a user name or password.");
  if (url.hash || raw.includes("#")) throw new TargetError("url_invalid", "url must not contain a #fragment.");
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  if (!host) throw new TargetError("url_invalid", "url must name a host.");
  if (parseIPv4(host) || parseIPv6(host)) return { url, host, literal: [host] };
  if (/^[0-9.]+$/.test(host) || /^0x/i.test(host)) throw new TargetError("url_invalid", "url has a malformed IP address.");
  // RFC 6761: localhost and its subdomains are the loopback interface, whatever DNS says.
  if (host === "localhost" || host.endsWith(".localhost")) return { url, host, literal: ["127.0.0.1", "::1"] };
  if (!host.includes(".")) throw new TargetError("url_invalid", "url must name a fully qualified host (such as example.com).");
  return { url, host };
}

export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
};

/** Throws TargetError unless every address is allowed in this environment. */
export function checkAddresses(host: string, addresses: string[], environment: Environment, allowPrivate = false): void {
  for (const a of addresses) {
    const c = classifyAddress(a);
    if (!c) throw new TargetError("url_unresolvable", `${host} resolved to something that is not an IP address.`);
    if (!isAllowedClass(c, environment, allowPrivate)) {
      const shown = a === host ? host : `${host} (${a})`;
      throw new TargetError(
        "url_address_forbidden",
        environment === "production"
          ? `${shown} is ${CLASS_DESCRIPTION[c]}; production webhooks go only to public addresses.`
          : PRIVATE_CLASSES.has(c)
            ? `${shown} is ${CLASS_DESCRIPTION[c]}; sandbox webhooks go there only when the server's operator sets SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS=true (as \`bun run dev\` does).`
            : `${shown} is ${CLASS_DESCRIPTION[c]}; webhooks never go there.`,
      );
    }
  }
}

/**
 * The addresses a delivery to `target` may connect to: all that the host resolves to,
 * each checked (one forbidden address refuses the whole host: a mixed answer is how
 * rebinding attacks look). Throws TargetError.
 */
export async function resolveTarget(
  target: CheckedUrl,
  environment: Environment,
  resolver: Resolver = systemResolver,
  timeoutMs = 5000,
  allowPrivate = false,
): Promise<string[]> {
  let addresses = target.literal;
  if (!addresses) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      addresses = await Promise.race([
        resolver(target.host),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error("DNS timeout")), timeoutMs);
        }),
      ]);
    } catch (e) {
      throw new TargetError("url_unresolvable", `${target.host} does not resolve to an address.`, { cause: e });
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0) throw new TargetError("url_unresolvable", `${target.host} does not resolve to an address.`);
  }
  checkAddresses(target.host, addresses, environment, allowPrivate);
  return addresses;
}
