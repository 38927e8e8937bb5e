/**
 * Waking a session actor from outside it (the sweeper, the transfer cursor, the API):
 * set its durable timer to now and NOTIFY the runners, both in the caller's transaction, so
 * the wake-up is lost neither if the NOTIFY is missed (the timer stays) nor if the caller
 * rolls back (neither happens).
 */
import type { Sql, TransactionSql } from "postgres";

export const SESSION_WAKE_CHANNEL = "paysession_sessions";

export async function wakeSessions(tx: Sql | TransactionSql, sessionIds: string[]): Promise<void> {
  if (sessionIds.length === 0) return;
  await tx`update app.payment_sessions set wake_at = now() where id in ${tx(sessionIds)}`;
  await tx`select pg_notify(${SESSION_WAKE_CHANNEL}, '')`;
}
