/**
 * Which tokens a sweep row moves, read beside it from its session's deposit: a row of the
 * session's own money (its token is the deposit's main stablecoin) moves every stablecoin the
 * session accepts on that network (session_deposits.tokens) in one call — a session paid half in
 * USDC and half in USDT is swept at once; a recovery row (sweeps/recover.ts: a stray token, or
 * native coin as the zero address) moves that one token. Each with its decimals, so that what
 * moved is counted in the session's unit on the network (session_deposits.decimals), as the
 * session counts what came in (sessions/indexed.ts).
 */
import { Type } from "@sinclair/typebox";
import type { PendingQuery, Row, Sql, TransactionSql } from "postgres";
import { col } from "../db/rows.ts";

/**
 * The tokens of sweep row `w` of deposit `d` (left-joined), as jsonb [{ address, decimals }], and
 * the unit as `unit`. A row without its deposit (none is written so, but a test or an old row)
 * moves its one token, counted as it moved (unit and decimals 0).
 */
export function sweepTokensSql(q: Sql | TransactionSql, sweep: string, deposit: string): PendingQuery<Row[]> {
  const [w, d] = [q(sweep), q(deposit)];
  return q`case when ${w}.token_address = ${d}.token_address and jsonb_array_length(${d}.tokens) > 0 then ${d}.tokens
               else jsonb_build_array(jsonb_build_object('address', ${w}.token_address, 'decimals', coalesce(${d}.decimals, 0))) end as tokens,
          coalesce(${d}.decimals, 0) as unit`;
}

/** The columns sweepTokensSql adds to a row shape. */
export const SWEEP_TOKEN_COLUMNS = {
  tokens: col.json(Type.Array(Type.Object({ address: Type.String(), decimals: Type.Integer({ minimum: 0, maximum: 77 }) }))),
  unit: col.int,
};

export interface SweepToken {
  /** Lowercase 0x hex; the zero address is native coin. */
  address: string;
  decimals: number;
}
