/**
 * The client's address of each request, set once by serve.ts and read by everything that records
 * or limits by address (the security history, the sign-in throttle): the socket peer, or — when
 * that peer is a trusted proxy (SERVICE_TRUSTED_PROXIES) — the client X-Forwarded-For names, read
 * right to left (trusted-proxies.ts). Never a header from a peer that is not trusted.
 */
export const clientAddresses = new WeakMap<Request, string>();

/** The request's client address; null when the socket gave none. */
export function clientAddress(request: Request): string | null {
  return clientAddresses.get(request) ?? null;
}
