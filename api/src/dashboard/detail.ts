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
import { readIndexedMoves, type IndexedMove } from "../sessions/indexed.ts";
import { isId } from "../../../shared/ids.ts";

export interface FundRow {
  chainId: number;
  direction: "in" | "out";
  txHash: string;
  logIndex: number;
  amount: string;
  at: Date;
  reverted: boolean;
}

export interface SweepRow {
  chainId: number;
  state: string;
  amount: string;
  sweptAmount: string | null;
  attempts: number;
  txHash: string | null;
  lastError: string | null;
  at: Date;
}

export interface TransactionDetail {
  view: MerchantSessionView;
  funds: FundRow[];
  sweeps: SweepRow[];
  events: { event: EventRow; deliveries: DeliveryView[]; attempts: AttemptRow[] }[];
  endpoints: Map<string, EndpointRow>;
  /** The indexed transfers in and out, confirmed or not: each payment's sender and depth. */
  moves: IndexedMove[];
}

export async function loadDetail(services: Services, merchant: Merchant, environment: Environment, id: string): Promise<TransactionDetail | undefined> {
  const { db, sql } = services.database;
  const row = isId("paymentSession", id) ? await findSession(db, merchant.id, environment, id) : undefined;
  if (!row) return undefined;
  const view = await loadMerchantView(db, row, publicMerchantId(merchant, environment));
  const funds = (
    await sql`select chain_id, direction, tx_hash, log_index, amount, coalesce(block_timestamp, created_at) as at, reverted_at
                from app.session_funds where session_id = ${row.id} order by at, direction`
  ).map((f) => ({
    chainId: f.chain_id as number,
    direction: f.direction as "in" | "out",
    txHash: f.tx_hash as string,
    logIndex: f.log_index as number,
    amount: String(f.amount),
    at: new Date(f.at),
    reverted: f.reverted_at != null,
  }));
  const sweeps = (
    await sql`select w.chain_id, w.state, w.amount, w.swept_amount, w.attempts, w.last_error, w.created_at, t.tx_hash
                from app.sweeps w left join app.sweep_transactions t on t.id = w.transaction_id
               where w.session_id = ${row.id} order by w.created_at`
  ).map((w) => ({
    chainId: w.chain_id as number,
    state: w.state as string,
    amount: String(w.amount),
    sweptAmount: w.swept_amount == null ? null : String(w.swept_amount),
    attempts: w.attempts as number,
    txHash: (w.tx_hash as string | null) ?? null,
    lastError: (w.last_error as string | null) ?? null,
    at: new Date(w.created_at),
  }));
  const owner = { merchantId: merchant.id, environment };
  const sessionEvents = await sessionEventsOf(db, row.id);
  const ids = sessionEvents.map((e) => e.id);
  const [deliveries, attempts, endpointRows, moves] = await Promise.all([
    deliveriesOfEvents(db, ids),
    newestAttemptsOfEvents(db, owner, ids, 10),
    listEndpoints(db, owner),
    readIndexedMoves(sql, row.id),
  ]);
  const events = sessionEvents.map((event) => ({ event, deliveries: deliveries.get(event.id) ?? [], attempts: attempts.get(event.id)?.rows ?? [] }));
  const endpoints = new Map(endpointRows.map((e) => [e.id, e]));
  return { view, funds, sweeps, events, endpoints, moves };
}
