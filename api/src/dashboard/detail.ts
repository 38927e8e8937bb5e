/** Everything the transaction detail page shows, read from the same stores the API reads. */
import type { Services } from "../http/services.ts";
import type { Environment } from "../../../shared/environment.ts";
import type { Merchant } from "../credentials/store.ts";
import { publicMerchantId } from "../credentials/store.ts";
import { findSession, loadMerchantView, sessionEventsOf } from "../sessions/repository.ts";
import type { MerchantSessionView, EventRow } from "../sessions/views.ts";
import { newestAttemptsOfEvents, type AttemptRow } from "../webhooks/attempts.ts";
import { listEndpoints, type EndpointRow } from "../webhooks/endpoints.ts";
import { deliveriesOfEvents, type DeliveryView } from "../webhooks/events.ts";
import { indexerTablesPresent, readIndexedMoves, type IndexedMove } from "../sessions/indexed.ts";
import { refundableOf } from "../refunds/store.ts";
import { returnsOfSession, type AutoReturnRow } from "../refunds/auto-returns-store.ts";
import type { RefundView } from "../refunds/view.ts";
import { sessionRefunds } from "./refunds.ts";
import { isId } from "../../../shared/ids.ts";
import { col, decodeRows, rowShape } from "../db/rows.ts";

export interface FundRow {
  chainId: number;
  direction: "in" | "out";
  txHash: string;
  logIndex: number;
  amount: string;
  /** A payment's stablecoin (lowercase); null: the deposit's main token, or money out. */
  token: string | null;
  at: Date;
  reverted: boolean;
}

export interface SweepRow {
  chainId: number;
  /** The stablecoin it moves (lowercase). */
  token: string;
  state: string;
  amount: string;
  sweptAmount: string | null;
  attempts: number;
  txHash: string | null;
  lastError: string | null;
  at: Date;
}

const FundsRead = rowShape("a session's ledger", {
  chain_id: col.int,
  direction: col.oneOf(["in", "out"] as const),
  tx_hash: col.text,
  log_index: col.int,
  amount: col.numeric,
  token_address: col.nullable(col.text),
  at: col.time,
  reverted_at: col.nullable(col.time),
});
const SweepsRead = rowShape("a session's sweeps", {
  chain_id: col.int,
  token_address: col.text,
  state: col.text,
  amount: col.numeric,
  swept_amount: col.nullable(col.numeric),
  attempts: col.int,
  last_error: col.nullable(col.text),
  created_at: col.time,
  tx_hash: col.nullable(col.text),
});

export interface TransactionDetail {
  view: MerchantSessionView;
  funds: FundRow[];
  sweeps: SweepRow[];
  events: { event: EventRow; deliveries: DeliveryView[]; attempts: AttemptRow[] }[];
  endpoints: Map<string, EndpointRow>;
  /** The indexed transfers in and out, confirmed or not: each payment's sender and depth. */
  moves: IndexedMove[];
  /** The session's refunds, newest first, as the API shows them. */
  refunds: RefundView[];
  /** Whether anything is left to refund (the page's Refund action). */
  refundable: boolean;
  /** The session's automatic returns, oldest first (docs/refunds.md, "Automatic returns"). */
  autoReturns: AutoReturnRow[];
}

export async function loadDetail(services: Services, merchant: Merchant, environment: Environment, id: string): Promise<TransactionDetail | undefined> {
  const { db, sql } = services.database;
  const row = isId("paymentSession", id) ? await findSession(db, merchant.id, environment, id) : undefined;
  if (!row) return undefined;
  const view = await loadMerchantView(db, row, publicMerchantId(merchant, environment));
  const funds = decodeRows(
    FundsRead,
    await sql`select chain_id, direction, tx_hash, log_index, amount, token_address, coalesce(block_timestamp, created_at) as at, reverted_at
                from app.session_funds where session_id = ${row.id} order by at, direction`,
  ).map((f) => ({ chainId: f.chain_id, direction: f.direction, txHash: f.tx_hash, logIndex: f.log_index, amount: f.amount, token: f.token_address, at: f.at, reverted: f.reverted_at !== null }));
  const sweeps = decodeRows(
    SweepsRead,
    await sql`select w.chain_id, w.token_address, w.state, w.amount, w.swept_amount, w.attempts, w.last_error, w.created_at, t.tx_hash
                from app.sweeps w left join app.sweep_transactions t on t.id = w.transaction_id
               where w.session_id = ${row.id} order by w.created_at`,
  ).map((w) => ({
    chainId: w.chain_id,
    token: w.token_address.toLowerCase(),
    state: w.state,
    amount: w.amount,
    sweptAmount: w.swept_amount,
    attempts: w.attempts,
    txHash: w.tx_hash,
    lastError: w.last_error,
    at: w.created_at,
  }));
  const owner = { merchantId: merchant.id, environment };
  const sessionEvents = await sessionEventsOf(db, row.id);
  const ids = sessionEvents.map((e) => e.id);
  const [deliveries, attempts, endpointRows, moves, refunds, rests, autoReturns] = await Promise.all([
    deliveriesOfEvents(db, ids),
    newestAttemptsOfEvents(db, owner, ids, 10),
    listEndpoints(db, owner),
    readIndexedMoves(sql, row.id),
    sessionRefunds(services, owner, row.id),
    indexerTablesPresent(sql).then((present) => refundableOf(sql, row.id, present)),
    returnsOfSession(sql, row.id),
  ]);
  const events = sessionEvents.map((event) => ({ event, deliveries: deliveries.get(event.id) ?? [], attempts: attempts.get(event.id)?.rows ?? [] }));
  const endpoints = new Map(endpointRows.map((e) => [e.id, e]));
  return { view, funds, sweeps, events, endpoints, moves, refunds, refundable: rests.some((r) => r.rest > 0n), autoReturns };
}
