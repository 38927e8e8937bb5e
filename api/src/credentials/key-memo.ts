/**
 * The last lookup of each API key this process made, by key hash, for creates and retrieves.
 *
 * A create (POST /payment-sessions, with or without an Idempotency-Key) may skip its key's lookup
 * (a round trip before its write, ≈ 1.6 ms of a create's 9 under load, and a statement of its own
 * in Postgres): it is prepared from the key's last lookup and carries that lookup's KeyCheck to its
 * statement, which writes the session only if the key is still there unrevoked and the merchant's
 * settlement addresses are still the ones the deposit addresses were made for
 * (sessions/create/statement.ts). A create whose check fails is not written; its request looks the
 * key up again and is prepared anew (sessions/create/create.ts), so a revoked key is refused and
 * a new settlement address is used from the next create on — as when every create looked its key
 * up. A create refused before its write (a bad body, no settlement address in the reused lookup)
 * is answered from a fresh lookup too: 401 for a key revoked meanwhile, and no stale "no
 * settlement address". A revocation or settlement change that commits while the statement runs
 * is ordered after that create, as it was after a lookup of its own.
 *
 * A retrieve (GET /payment-sessions/{id}) reuses it the same way: its one statement reads the
 * session only if the key is still there unrevoked (sessions/repository.ts readMerchantView);
 * otherwise the key is looked up again, and a revoked key refused.
 *
 * Every other request looks its key up, and every lookup (any route) refreshes the entry or,
 * for a key gone or revoked, removes it. Holding it loses nothing on a restart: the next create
 * looks the key up. Bounded: past `capacity` keys the oldest entry goes. Keyed by the key's
 * hash: no secret is kept.
 */
import type { KeyLookup } from "./store.ts";

export class KeyMemo {
  private readonly byHash = new Map<string, KeyLookup>();

  constructor(private readonly capacity = 10_000) {}

  /** The key's last lookup, if this process made one and found it unrevoked. */
  get(keyHash: string): KeyLookup | undefined {
    return this.byHash.get(keyHash);
  }

  /** After a lookup of this hash: what it found (undefined: no such key). */
  remember(keyHash: string, found: KeyLookup | undefined): void {
    this.byHash.delete(keyHash);
    if (!found || found.key.revokedAt) return;
    if (this.byHash.size >= this.capacity) this.byHash.delete(this.byHash.keys().next().value!);
    this.byHash.set(keyHash, found);
  }

  get size(): number {
    return this.byHash.size;
  }
}
