/**
 * What a restricted API key may do (docs/merchant-guide.md, "API key scopes"). Pure. Each API
 * route names the one scope it takes beside its auth scheme (http/schemas.ts doc()), and
 * http/auth.ts holds every restricted key to it; a key whose scopes are NULL (every key made
 * before scopes existed, and "full access" keys) may call every route.
 *
 * Reads and writes are apart so that a reporting job can hold a key that changes nothing. Revealing
 * a webhook secret is a write: whoever holds a secret can forge webhooks to the merchant.
 */
export const SCOPES = {
  "sessions:read": "List and retrieve payment sessions.",
  "sessions:write": "Create and cancel payment sessions.",
  "refunds:read": "List and retrieve refunds, refund balances, refund settings and automatic returns.",
  "refunds:write": "Create, cancel and approve refunds; change refund settings; keep automatic returns.",
  "webhooks:read": "List and retrieve webhook endpoints and their delivery attempts.",
  "webhooks:write": "Create, change and delete webhook endpoints, reveal and rotate their secrets, send test events, redeliver events.",
  "events:read": "List and retrieve events and their delivery attempts.",
  "settlement:read": "List settlement addresses.",
  "settlement:write": "Set settlement addresses.",
  "payment_links:read": "List and retrieve payment links.",
  "payment_links:write": "Create and deactivate payment links.",
  "sandbox:write": "Use the sandbox tools (faucet, pay, expire, fail a sweep, simulate an error).",
  "facilitator:settle": "Verify and settle x402 payments as their facilitator (a resource server's key: docs/x402.md); a settle creates a payment session.",
} as const satisfies Record<string, string>;

export type Scope = keyof typeof SCOPES;
export const SCOPE_NAMES = Object.keys(SCOPES) as Scope[];

export function isScope(s: string): s is Scope {
  return Object.hasOwn(SCOPES, s);
}

/** A key's scopes as stored: null is full access. */
export type KeyScopes = readonly Scope[] | null;

/** Pure: whether a key with `scopes` may call a route that takes `needed` (undefined: a route that declares none, which only full access may call). */
export function allows(scopes: KeyScopes, needed: Scope | undefined): boolean {
  if (scopes === null) return true;
  return needed !== undefined && scopes.includes(needed);
}

/**
 * Pure: scopes from a list a person or a script typed ("a,b", checkboxes), each checked against
 * the catalogue, duplicates dropped, in catalogue order. An empty list is refused: a key that may
 * do nothing is a mistake, and "no scopes given" means full access to whoever calls this.
 */
export function parseScopes(items: readonly string[]): { ok: true; scopes: Scope[] } | { ok: false; problem: string } {
  const wanted = items.map((s) => s.trim()).filter((s) => s !== "");
  const unknown = wanted.filter((s) => !isScope(s));
  if (unknown.length) return { ok: false, problem: `Unknown scope${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")}; the scopes are ${SCOPE_NAMES.join(", ")}.` };
  if (wanted.length === 0) return { ok: false, problem: "Name at least one scope, or give the key full access." };
  return { ok: true, scopes: SCOPE_NAMES.filter((s) => wanted.includes(s)) };
}

/** The longest expiry a key may be given, in days (ten years): beyond that "never" says it better. */
export const MAX_EXPIRY_DAYS = 3650;

/** Pure: a key's expiry `days` whole days from `now`, or the problem with `days`. */
export function expiryIn(days: string, now: Date): { ok: true; expiresAt: Date } | { ok: false; problem: string } {
  const n = Number(days.trim());
  if (!/^\d+$/.test(days.trim()) || !Number.isSafeInteger(n) || n < 1 || n > MAX_EXPIRY_DAYS) {
    return { ok: false, problem: `The expiry must be a whole number of days from 1 to ${MAX_EXPIRY_DAYS}.` };
  }
  return { ok: true, expiresAt: new Date(now.getTime() + n * 86_400_000) };
}

/** Pure: whether a key expiring at `expiresAt` (null: never) is expired at `now`. */
export function isExpired(expiresAt: Date | null, now: number): boolean {
  return expiresAt !== null && expiresAt.getTime() <= now;
}
