/**
 * TEST helper: payment sessions of any status, network and creation day, written with SQL as
 * the service would have left them (the session, its deposit on the paying network, its events:
 * created, then the status it is in), for the dashboard home's tests. Real rows in the real
 * schema; only their history is made up instead of lived through.
 */
import type { Sql } from "postgres";
import { randomBytes } from "node:crypto";
import { newId } from "../shared/ids.ts";
import { parseAmount } from "../shared/money.ts";
import { PRESETS } from "../shared/chains/presets.ts";
import type { Environment } from "../shared/environment.ts";

export const TUSD = PRESETS.local.stablecoins[0].address!.toLowerCase();

export interface SeededSession {
  merchantId: string;
  environment?: Environment;
  status: "PENDING" | "FUNDED" | "SUCCEEDED" | "CANCELED" | "ERROR";
  reason?: string;
  /** "12.34" (USD). */
  amount: string;
  /** UTC days before today it was created (at 00:01 UTC that day). */
  daysAgo: number;
  /** The paying network (31337 or 31338, TestUSD, 6 decimals): the amount in base units is funded. */
  paidOn?: number;
  /** For a FUNDED session: how long ago it became FUNDED (default: a minute after its creation). */
  fundedMinutesAgo?: number;
}

export async function seedSession(sql: Sql, s: SeededSession): Promise<string> {
  const id = newId("paymentSession");
  const env = s.environment ?? "sandbox";
  const parsed = parseAmount(s.amount);
  if (!parsed.ok) throw new Error(`bad amount ${s.amount}`);
  const minor = parsed.minor;
  const baseUnits = s.paidOn ? (minor * 10_000n).toString() : null;
  const created = sql`((now() at time zone 'UTC')::date - ${s.daysAgo}::int)::timestamp at time zone 'UTC' + interval '1 minute'`;
  const changed = s.fundedMinutesAgo !== undefined ? sql`now() - make_interval(mins => ${s.fundedMinutesAgo})` : sql`${created} + interval '1 minute'`;
  const reason = s.reason ?? { PENDING: "created", FUNDED: "paid", SUCCEEDED: "swept", CANCELED: "expired", ERROR: "sweep_failed" }[s.status];
  const sequence = s.status === "PENDING" ? 1 : 2;
  await sql`
    insert into app.payment_sessions (id, merchant_id, environment, status, status_reason, amount_minor, currency, metadata, expires_at,
                                      token_hash, token_expires_at, sequence, funding_chain_id, funding_amount, created_at, updated_at)
    values (${id}, ${s.merchantId}, ${env}, ${s.status}, ${reason}, ${minor.toString()}, 'USD', '{}'::jsonb, now() + interval '1 hour',
            ${randomBytes(32).toString("hex")}, now() + interval '1 hour', ${sequence}, ${s.paidOn ?? null}, ${baseUnits}::numeric, ${created}, ${changed})`;
  await sql`
    insert into app.session_deposits (session_id, chain_id, address, settlement_address, token_address, decimals, required_base_units, confirmations)
    values (${id}, ${s.paidOn ?? 31337}, ${`0x${randomBytes(20).toString("hex")}`}, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8', ${TUSD}, 6, ${(minor * 10_000n).toString()}::numeric, 1)`;
  await sql`
    insert into app.session_events (id, session_id, merchant_id, environment, sequence, status, previous_status, reason, detail, created_at)
    values (${newId("event")}, ${id}, ${s.merchantId}, ${env}, 1, 'PENDING', null, 'created', '{}'::jsonb, ${created})`;
  if (sequence === 2) {
    await sql`
      insert into app.session_events (id, session_id, merchant_id, environment, sequence, status, previous_status, reason, detail, created_at)
      values (${newId("event")}, ${id}, ${s.merchantId}, ${env}, 2, ${s.status}, 'PENDING', ${reason}, '{}'::jsonb, ${changed})`;
  }
  return id;
}
