/**
 * The I/O half of bounded mode: asks app.watched_addresses about the addresses of one transfer
 * (and app.session_nonces whether an AuthorizationUsed's nonce is one of our sessions'),
 * on a small pool of its own in autocommit (each statement sees everything committed before it
 * started: the safety argument in watched.ts rests on that). An index on the address of each
 * table under the view (drizzle/0009) makes it a lookup whatever the number of rows.
 */
import postgres from "postgres";
import type { WatchedLookup } from "./watched.ts";
import { CUSTOM_PLANS } from "../shared/postgres-settings.ts";
import { hasErrorCode } from "../shared/error-chain.ts";

/**
 * The one statement of the lookup. Each branch of the view is one table read by its address
 * index (drizzle/0010, 0013): no join whose plan could depend on statistics that lag behind a
 * burst of creates (the view's first form hashed every session: 84 ms at 200,000 sessions).
 */
export const WATCHED_LOOKUP_SQL = "select distinct address from app.watched_addresses where address = any($1::text[])";

export function postgresWatchedLookup(databaseUrl: string): WatchedLookup & { end(): Promise<void> } {
  // Planned each time (shared/postgres-settings.ts): no plan made while the tables were empty survives their growth.
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, idle_timeout: 30, connection: CUSTOM_PLANS });
  let warned = false;
  const lookup = async (addresses: string[]) => {
    try {
      const rows = await sql.unsafe<{ address: string }[]>(WATCHED_LOOKUP_SQL, [addresses], { prepare: true });
      return new Set(rows.map((r) => r.address.toLowerCase()));
    } catch (e) {
      // No view yet means the API never ran its migrations here: no address was ever
      // registered, so nothing can be kept. Say so once.
      if (!hasErrorCode(e, "42P01")) throw e;
      if (!warned) console.warn("bounded mode: app.watched_addresses does not exist yet; keeping no transfers");
      warned = true;
      return new Set<string>();
    }
  };
  return Object.assign(lookup, { end: () => sql.end() });
}

/**
 * Whether a nonce is one of our sessions' (app.session_nonces, by its primary key), or that of a
 * recorded authorization (drizzle/0018: an index on nonce; a session an older build created has
 * no nonce row).
 */
export const AUTHORIZATION_LOOKUP_SQL =
  "select exists (select 1 from app.session_nonces where nonce = $1) or exists (select 1 from app.payment_authorizations where nonce = $1) as ours";

/**
 * Bounded mode for payments by authorization: an AuthorizationUsed is kept only if its nonce is
 * one of our sessions' (app.session_nonces) — whoever submits the authorization, whether or not
 * the API ever recorded it — as a transfer is kept only if it touches a watched address. The same
 * safety argument (watched.ts): a session's nonce is committed with the session, before its
 * create is answered, so before anyone can know the session id it derives from, let alone sign
 * or submit an authorization with it; and the lookup runs after its block was mined, on an
 * autocommit connection that sees everything committed before it.
 */
export function postgresAuthorizationLookup(databaseUrl: string): ((nonce: string) => Promise<boolean>) & { end(): Promise<void> } {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, idle_timeout: 30, connection: CUSTOM_PLANS });
  let warned = false;
  const lookup = async (nonce: string) => {
    try {
      const [row] = await sql.unsafe<{ ours: boolean }[]>(AUTHORIZATION_LOOKUP_SQL, [nonce.toLowerCase()], { prepare: true });
      return row?.ours === true;
    } catch (e) {
      // As above: no table means no authorization was ever recorded here.
      if (!hasErrorCode(e, "42P01")) throw e;
      if (!warned) console.warn("bounded mode: app.session_nonces does not exist yet; keeping no authorized transfers");
      warned = true;
      return false;
    }
  };
  return Object.assign(lookup, { end: () => sql.end() });
}
