/**
 * The durable timer of an automatic return (docs/refunds.md, "Automatic returns"): a row of
 * app.auto_returns due `delay_seconds` after the step that recorded the money, written in that
 * step's transaction (the session actor's), so the money and its timer commit together or not
 * at all. Only when the merchant has automatic returns on in that environment: the statement
 * reads the setting itself, so a merchant with none writes nothing. One row per session, network
 * and reason (its unique index): a later step that sees more such money adds nothing, and the
 * return, when due, gives back what is returnable then. The sweeper's loop of the network claims
 * it (refunds/auto-returns.ts). Here because the session actor writes it and the refunds folder
 * reads it, and neither imports the other for it.
 */
import type { PendingQuery, Row, TransactionSql } from "postgres";
import { newId } from "../../../shared/ids.ts";

export interface ReturnTimer {
  sessionId: string;
  merchantId: string;
  environment: string;
  chainId: number;
  reason: "overpayment" | "late_payment" | "underpaid_expired";
}

/** The statement that starts the timer when the merchant's setting is on; nothing otherwise, or when it runs already. */
export function startReturnTimerStatement(tx: TransactionSql, t: ReturnTimer): PendingQuery<Row[]> {
  return tx`
    insert into app.auto_returns (id, session_id, merchant_id, environment, chain_id, reason, due_at)
    select ${newId("autoReturn")}, ${t.sessionId}, s.merchant_id, s.environment, ${t.chainId}, ${t.reason}, now() + make_interval(secs => s.delay_seconds)
      from app.auto_return_settings s
     where s.merchant_id = ${t.merchantId} and s.environment = ${t.environment} and s.enabled
    on conflict (session_id, chain_id, reason) do nothing`;
}
