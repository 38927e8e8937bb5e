/**
 * The statements of automatic returns (app.auto_returns, app.auto_return_settings; docs/refunds.md,
 * "Automatic returns"), one function each: the merchant's setting, read and saved; the due timers
 * of a network claimed with what their decision needs; a timer's outcome; the merchant acting
 * first (a refund of theirs, or "keep it"). The timer itself is written by the session step
 * (effects/auto-return-timer.ts).
 */
import type { Sql, TransactionSql } from "postgres";
import { Type } from "@sinclair/typebox";
import { col, decodeFirst, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import { AUTO_RETURN_REASONS } from "./logic.ts";
import { changeStatement, type ChangedBy } from "../credentials/security-history.ts";

/** The default wait before money goes back by itself: a day for the merchant to act. */
export const DEFAULT_DELAY_SECONDS = 86_400;
export const MIN_DELAY_SECONDS = 1;
export const MAX_DELAY_SECONDS = 2_592_000;

export interface AutoReturnSetting {
  enabled: boolean;
  delaySeconds: number;
}

const SettingRow = rowShape("automatic returns setting", { enabled: col.bool, delay_seconds: col.int });

/** The merchant's setting in the environment; off, with the default delay, when never saved. */
export async function autoReturnSetting(sql: Sql, merchantId: string, environment: string): Promise<AutoReturnSetting> {
  const r = decodeFirst(SettingRow, await sql`select enabled, delay_seconds from app.auto_return_settings where merchant_id = ${merchantId} and environment = ${environment}`);
  return r ? { enabled: r.enabled, delaySeconds: r.delay_seconds } : { enabled: false, delaySeconds: DEFAULT_DELAY_SECONDS };
}

/**
 * Saves the setting (for money that arrives from now on: a timer already running keeps its due
 * time), with its line in the security history in the same transaction: automatic returns send
 * the merchant's money out, so who turned them on or off is on record, like a settlement change.
 */
export async function saveAutoReturnSetting(sql: Sql, merchantId: string, by: ChangedBy, s: AutoReturnSetting): Promise<AutoReturnSetting> {
  return sql.begin(async (tx) => {
    const r = decodeFirst(
      SettingRow,
      await tx`
        insert into app.auto_return_settings (merchant_id, environment, enabled, delay_seconds) values (${merchantId}, ${by.environment}, ${s.enabled}, ${s.delaySeconds})
        on conflict (merchant_id, environment) do update set enabled = excluded.enabled, delay_seconds = excluded.delay_seconds, updated_at = now()
        returning enabled, delay_seconds`,
    );
    await changeStatement(tx, by, "refund_settings_changed", { automaticReturns: r!.enabled, delaySeconds: r!.delay_seconds });
    return { enabled: r!.enabled, delaySeconds: r!.delay_seconds };
  });
}

const DueReturn = rowShape("due automatic return", {
  id: col.text,
  session_id: col.text,
  merchant_id: col.text,
  environment: col.oneOf(["sandbox", "production"] as const),
  chain_id: col.int,
  reason: col.oneOf(AUTO_RETURN_REASONS),
  enabled: col.bool,
  status_reason: col.text,
  expires_at: col.time,
  funding_chain_id: col.nullable(col.int),
  required: col.wholeNumber,
  main_token: col.text,
  tokens: col.json(Type.Array(Type.Object({ address: Type.String() }, { additionalProperties: true }))),
});
export type DueReturnRow = RowOf<typeof DueReturn>;

/**
 * The network's due timers, locked (FOR UPDATE SKIP LOCKED: another worker takes others, never
 * the same), with the session's facts and whether the merchant's setting is still on.
 */
export async function claimDueReturns(tx: TransactionSql, chainId: number, limit: number): Promise<DueReturnRow[]> {
  return decodeRows(
    DueReturn,
    await tx`
      select a.id, a.session_id, a.merchant_id, a.environment, a.chain_id, a.reason, coalesce(s.enabled, false) as enabled,
             p.status_reason, p.expires_at, p.funding_chain_id, d.required_base_units::text as required, lower(d.token_address) as main_token, d.tokens
        from app.auto_returns a
        join app.payment_sessions p on p.id = a.session_id
        join app.session_deposits d on d.session_id = a.session_id and d.chain_id = a.chain_id
        left join app.auto_return_settings s on s.merchant_id = a.merchant_id and s.environment = a.environment
       where a.chain_id = ${chainId} and a.state = 'scheduled' and a.due_at <= now()
       order by a.due_at, a.id
       limit ${limit}
         for update of a skip locked`,
  );
}

const Payment = rowShape("payment to return", { token_address: col.nullable(col.text), amount: col.wholeNumber, block_timestamp: col.nullable(col.time), reverted: col.bool });

/** The session's payments in on the network, as its ledger holds them. */
export async function paymentsOn(tx: TransactionSql, sessionId: string, chainId: number): Promise<RowOf<typeof Payment>[]> {
  return decodeRows(
    Payment,
    await tx`
      select lower(token_address) as token_address, amount::text as amount, block_timestamp, reverted_at is not null as reverted
        from app.session_funds where session_id = ${sessionId} and chain_id = ${chainId} and direction = 'in'`,
  );
}

/** A timer's outcome: refunded (with its refund), or skipped with why. */
export async function settleReturn(tx: TransactionSql, id: string, out: { state: "refunded"; refundId: string } | { state: "skipped"; outcome: string }): Promise<void> {
  await tx`
    update app.auto_returns set state = ${out.state}, refund_id = ${out.state === "refunded" ? out.refundId : null}, outcome = ${out.state === "skipped" ? out.outcome : null}, decided_at = now()
     where id = ${id} and state = 'scheduled'`;
}

/**
 * The merchant acted first on the session: its returns still waiting are theirs now (`kept`, or
 * `merchant_refunded` when they refunded). Waits for a worker deciding one of them at this moment,
 * then changes nothing of it. Returns how many it settled.
 */
export async function merchantActed(tx: TransactionSql | Sql, sessionId: string, state: "kept" | "merchant_refunded"): Promise<number> {
  const rows = await tx`update app.auto_returns set state = ${state}, decided_at = now() where session_id = ${sessionId} and state = 'scheduled' returning id`;
  return rows.length;
}

const ReturnView = rowShape("automatic return", {
  id: col.text,
  chain_id: col.int,
  reason: col.oneOf(AUTO_RETURN_REASONS),
  state: col.oneOf(["scheduled", "refunded", "kept", "merchant_refunded", "skipped"] as const),
  due_at: col.time,
  refund_id: col.nullable(col.text),
  outcome: col.nullable(col.text),
  created_at: col.time,
  decided_at: col.nullable(col.time),
});
export type AutoReturnRow = RowOf<typeof ReturnView>;

/** A session's automatic returns, oldest first. */
export async function returnsOfSession(sql: Sql, sessionId: string): Promise<AutoReturnRow[]> {
  return decodeRows(
    ReturnView,
    await sql`select id, chain_id, reason, state, due_at, refund_id, outcome, created_at, decided_at from app.auto_returns where session_id = ${sessionId} order by created_at, id`,
  );
}
