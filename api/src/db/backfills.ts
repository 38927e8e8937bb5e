/**
 * What a migration needs and SQL cannot do, run by migrate.ts in the migration's own transaction
 * right after its statements (so it happens exactly once, with the migration, or not at all).
 *
 * 0021_session_nonces: the EIP-3009 nonce of every session that can still be paid by one — not
 * yet past its expiry, which is an authorization's validBefore — is keccak256 of its id, which
 * Postgres has no function for. Sessions already past it need none: no authorization of theirs
 * can be carried out any more. A session an older build creates during a rolling upgrade, after
 * this ran, has no row: it is found by its recorded authorization only, as before.
 */
import type { TransactionSql } from "postgres";
import { authorizationNonce } from "../../../shared/contracts/eip3009.ts";
import { arrayParam } from "./client.ts";
import { col, decodeRows, rowShape } from "./rows.ts";

const OpenSession = rowShape("sessions still payable by authorization", { id: col.text });

async function sessionNonces(tx: TransactionSql): Promise<void> {
  const open = decodeRows(OpenSession, await tx`select id from app.payment_sessions where expires_at > now()`);
  for (let i = 0; i < open.length; i += 1000) {
    const ids = open.slice(i, i + 1000).map((r) => r.id);
    await tx`
      insert into app.session_nonces (nonce, session_id)
      select * from unnest(${arrayParam(tx, ids.map(authorizationNonce))}, ${arrayParam(tx, ids)})
      on conflict do nothing`;
  }
}

/** Migration tag → what runs after its statements. */
export const AFTER_MIGRATION: Record<string, (tx: TransactionSql) => Promise<void>> = {
  "0021_session_nonces": sessionNonces,
};
