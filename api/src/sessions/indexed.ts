/**
 * Everything the session side reads from the indexer's tables, in one place — always through the
 * views schema `indexer`, which follows the index of the node holding the indexer seat (each
 * indexer node's Ponder writes a schema of its own, indexer_<n>: indexer/views.ts), never an
 * instance's schema by name, so a takeover switches every read at once: a session's transfers in and out with their
 * confirmations, its payment by authorization (by the session's EIP-3009 nonce), whether the indexer has stored a block past an expiry, the chains' indexed
 * heads, and which sessions new blocks concern. The schema may be missing (no indexer ever ran
 * here: nothing indexed) or being rebuilt (not ready: missing rows are not missing payments).
 *
 * Ponder's private table. Whether the indexer is past its backfill is kept by Ponder in
 * `indexer._ponder_meta` (`value->>'is_ready'`), which Ponder does not document. This module is
 * the one place of the service that reads it, and the launcher (indexer/process.ts) the one
 * place that writes it (unlocking a schema left locked by a killed indexer). What Ponder does
 * expose — its HTTP `/ready` — is another process's answer at another moment; a step needs
 * readiness in the same snapshot as the transfers it reads (one statement: a rebuild that
 * begins between the two must not read as missing payments). So the private read stays, here,
 * covered by indexer/indexer.test.ts and sessions/indexer-behind.test.ts against the pinned
 * Ponder; docs/decisions.md, "Ponder's readiness".
 */
import type { Sql, TransactionSql } from "postgres";
import { col, decodeFirst, decodeRows, rowShape, type RowOf } from "../db/rows.ts";
import { authorizationNonce } from "../gasless/authorization.ts";
import type { Transfer } from "./decide.ts";
import type { IndexedAuthorized, IndexedOutflow } from "./movements.ts";
import type { PaymentMethod } from "./facts.ts";
import { hasErrorCode } from "../../../shared/error-chain.ts";

/** The views schema over the seat holder's index (indexer/views.ts VIEWS_SCHEMA; a test checks both agree). */
export const INDEXER_SCHEMA = "indexer";

/**
 * NOTIFYed by the indexer with the commit of each live block (indexer/head-notify.ts): runners
 * look at the heads at once instead of at their next poll.
 */
export const INDEXED_HEAD_CHANNEL = "paysession_indexed_head";

export type { IndexedAuthorized, IndexedOutflow };

/**
 * Whether schema `indexer` has its tables (views), as this process last saw: only a positive answer is
 * kept, so the catalog is asked once instead of at every step. A takeover keeps them (CREATE OR
 * REPLACE VIEW: the same relations, now over another schema). It can only go stale one way — the
 * followed instance's tables dropped for a rebuild, and its views with them — and then the next statement naming them fails with 42P01
 * (undefined table), which forgets the answer (forgetOnMissingTable): the caller's transaction
 * is lost and retried (stepSession does it once), never answered from a stale "ready". Whether the
 * indexer is *ready* is never kept: every read asks `_ponder_meta` in the same statement.
 */
let tablesSeen = false;

/** An undefined-table error (42P01): the indexer dropped its tables for a rebuild. */
export const isMissingTable = (e: unknown) => hasErrorCode(e, "42P01");

/** Forgets the tables on an undefined-table error and says whether it was one. */
export function forgetOnMissingTable(e: unknown): boolean {
  if (!isMissingTable(e)) return false;
  tablesSeen = false;
  return true;
}

/** A transfer's depth: its chain's indexed head − its block + 1 (t: the transfer, h: the head). */
const CONFIRMATIONS = "greatest(coalesce(h.block_number, t.block_number) - t.block_number + 1, 0)::int as confirmations";

/**
 * A deposit `d`'s accepted stablecoins as rows `k(address, decimals)`: session_deposits.tokens, or
 * for a session created before several tokens, its one token in the deposit's unit.
 */
const ACCEPTED_TOKEN_ROWS = `jsonb_to_recordset(case when jsonb_array_length(d.tokens) > 0 then d.tokens
           else jsonb_build_array(jsonb_build_object('address', d.token_address, 'decimals', d.decimals)) end) as k(address text, decimals int)`;
const ACCEPTED_TOKENS = `cross join lateral ${ACCEPTED_TOKEN_ROWS}`;

/**
 * A transfer's value in the session's unit on its network (session_deposits.decimals, the most
 * decimals among its tokens), as the column `name`: every accepted stablecoin counts at par, and
 * sums across tokens of different decimals stay exact integers.
 */
const valueInUnit = (name: string) => `(t.value * 10::numeric ^ (d.decimals - k.decimals))::numeric(78, 0)::text as ${name}`;

/** A transfer's value in its own token's base units (a token the session does not accept has no unit of the session's). */
const RAW_VALUE = "t.value::text as value";

/** readIndexed's columns of a transfer `t` and its head `h`, its value as `value` (valueInUnit or RAW_VALUE). */
const transferColumns = (value: string) => `t.chain_id, t.tx_hash, t.log_index, ${value}, t.block_timestamp::text as block_timestamp, t."from", t."to", t.token, ${CONFIRMATIONS}`;

/**
 * The session's ($1) indexed transfers of value of its accepted stablecoins, into its deposit
 * addresses (`'in'`) and out of them (`'out'`) as the column `label`, each with `columns` of the
 * transfer `t` (its value: valueInUnit) and its head `h`.
 */
function sessionTransfersSql(label: string, columns: string): string {
  return `select 'in' as ${label}, ${columns}
         from app.session_deposits d
         ${ACCEPTED_TOKENS}
         join ${INDEXER_SCHEMA}.transfers t on t.chain_id = d.chain_id and t."to" = d.address and t.token = k.address
         left join ${INDEXER_SCHEMA}.chain_heads h on h.chain_id = t.chain_id
        where d.session_id = $1 and t.value > 0
       union all
       select 'out' as ${label}, ${columns}
         from app.session_deposits d
         ${ACCEPTED_TOKENS}
         join ${INDEXER_SCHEMA}.transfers t on t.chain_id = d.chain_id and t."from" = d.address and t.token = k.address
         left join ${INDEXER_SCHEMA}.chain_heads h on h.chain_id = t.chain_id
        where d.session_id = $1 and t.value > 0`;
}

/**
 * The session's ($1) payments by authorization (its EIP-3009 nonce: $2, or the nonce of the
 * authorization recorded for it — an x402 payment's is the client's own, claimed for the session
 * in app.session_nonces: x402/records.ts) in its accepted stablecoins on its networks, as the
 * column `label` = 'auth', with `columns` of the transfer `t` and its head `h`. Whatever their
 * recipient: movements.ts keeps those to the session's settlement address.
 */
function sessionAuthorizedSql(label: string, columns: string): string {
  return `select 'auth' as ${label}, ${columns}
         from app.session_deposits d
         ${ACCEPTED_TOKENS}
         join ${INDEXER_SCHEMA}.authorized_transfers t on t.nonce in ($2, (select p.nonce from app.payment_authorizations p where p.session_id = $1)) and t.chain_id = d.chain_id and t.token = k.address
         left join ${INDEXER_SCHEMA}.chain_heads h on h.chain_id = t.chain_id
        where d.session_id = $1 and t.value > 0`;
}

/**
 * The session's ($1) indexed transfers into its deposit addresses of a token it does not accept
 * (one the indexer watches all the same: a preset's stablecoin the operator left out), as the
 * column `label` = 'stray', each with `columns` of the transfer `t` (its value: in the token's own
 * base units) and its head `h`. Never counted toward a payment: reported and swept (actor.ts).
 */
function sessionStraySql(label: string, columns: string): string {
  return `select 'stray' as ${label}, ${columns}
         from app.session_deposits d
         join ${INDEXER_SCHEMA}.transfers t on t.chain_id = d.chain_id and t."to" = d.address
         left join ${INDEXER_SCHEMA}.chain_heads h on h.chain_id = t.chain_id
        where d.session_id = $1 and t.value > 0
          and not exists (select 1 from ${ACCEPTED_TOKEN_ROWS} where k.address = t.token)`;
}

/** What readIndexed finds of a session. */
export interface IndexedFacts {
  transfers: Transfer[];
  outflows: IndexedOutflow[];
  /** Transfers carried out by an authorization with the session's nonce (to anyone: see movements.authorizedPayments). */
  authorized: IndexedAuthorized[];
  /** Transfers into its deposit addresses of a token it does not accept; `value` in that token's base units. */
  strays: Transfer[];
}

/**
 * From the indexer's tables: transfers into the session's deposit addresses (value 0 is no
 * payment and is left out), transfers out of them, and transfers carried out by an authorization
 * with the session's nonce, each with its confirmations; "not_ready" while the indexer (re)builds;
 * none when it never ran. One statement once the tables are known to exist (readiness, transfers
 * in and out and by authorization together).
 */
export async function readIndexed(tx: Sql | TransactionSql, sessionId: string): Promise<IndexedFacts | "not_ready"> {
  if (!tablesSeen) {
    const meta = decodeFirst(
      IndexerTables,
      await tx`
        select to_regclass(${`${INDEXER_SCHEMA}._ponder_meta`})::text as meta, to_regclass(${`${INDEXER_SCHEMA}.transfers`})::text as transfers,
               to_regclass(${`${INDEXER_SCHEMA}.chain_heads`})::text as heads, to_regclass(${`${INDEXER_SCHEMA}.authorized_transfers`})::text as authorized,
               to_regclass('indexer_meta.settings')::text as launched`,
    );
    // No table: either no indexer was ever started here (nothing indexed: no transfers), or
    // one is rebuilding its schema (not ready: missing rows are not missing payments).
    if (!meta?.transfers || !meta.meta || !meta.heads || !meta.authorized) return meta?.launched ? "not_ready" : { transfers: [], outflows: [], authorized: [], strays: [] };
    tablesSeen = true;
  }
  let rows;
  try {
    rows = await tx.unsafe(
      // bool_and over no row is null: a _ponder_meta without is_ready counts as ready.
      `select 'ready' as dir, null::int as chain_id, null::text as tx_hash, null::int as log_index,
              bool_and((value->>'is_ready')::int = 1)::text as value, null::text as block_timestamp, null::text as "from", null::text as "to", null::text as token, null::int as confirmations
         from ${INDEXER_SCHEMA}._ponder_meta where value ? 'is_ready'
       union all
       ${sessionTransfersSql("dir", transferColumns(valueInUnit("value")))}
       union all
       ${sessionAuthorizedSql("dir", transferColumns(valueInUnit("value")))}
       union all
       ${sessionStraySql("dir", transferColumns(RAW_VALUE))}`,
      [sessionId, authorizationNonce(sessionId)],
      // Prepared (once per connection; still planned for each run: CUSTOM_PLANS): unprepared,
      // postgres.js asks Postgres for the parameters' types first — a round trip of its own that
      // also holds back every statement pipelined behind it (a step's sweep rounds, its writes).
      { prepare: true },
    );
  } catch (e) {
    forgetOnMissingTable(e);
    throw e;
  }
  const transfers: Transfer[] = [];
  const outflows: IndexedOutflow[] = [];
  const authorized: IndexedAuthorized[] = [];
  const strays: Transfer[] = [];
  for (const r of decodeRows(IndexedRow, rows)) {
    if (r.dir === "ready") {
      if (r.value === "false") return "not_ready";
      continue;
    }
    // Rows of transfers have every column; a null is a schema the code does not know.
    if (r.chain_id === null || r.tx_hash === null || r.log_index === null || r.value === null || r.block_timestamp === null || r.from === null || r.to === null || r.token === null || r.confirmations === null) {
      throw new Error(`an indexed transfer of session ${sessionId} has a null column`);
    }
    const incoming: Transfer = {
      chainId: r.chain_id,
      txHash: r.tx_hash,
      logIndex: r.log_index,
      value: BigInt(r.value),
      blockTimestamp: new Date(Number(r.block_timestamp) * 1000),
      confirmations: r.confirmations,
      from: r.from.toLowerCase(),
      token: r.token.toLowerCase(),
    };
    if (r.dir === "in") {
      transfers.push(incoming);
    } else if (r.dir === "stray") {
      strays.push(incoming);
    } else if (r.dir === "auth") {
      authorized.push({ ...incoming, from: r.from.toLowerCase(), to: r.to.toLowerCase(), method: "authorization" });
    } else {
      outflows.push({ chainId: r.chain_id, txHash: r.tx_hash, amount: BigInt(r.value), to: r.to, confirmations: r.confirmations });
    }
  }
  return { transfers, outflows, authorized, strays };
}

const IndexerTables = rowShape("indexer tables", {
  meta: col.nullable(col.text),
  transfers: col.nullable(col.text),
  heads: col.nullable(col.text),
  authorized: col.nullable(col.text),
  launched: col.nullable(col.text),
});

/** readIndexed's rows: one `ready` row (value 'true'/'false', or null: no is_ready yet), then the transfers. */
const IndexedRow = rowShape("indexed transfers", {
  dir: col.oneOf(["ready", "in", "out", "auth", "stray"] as const),
  chain_id: col.nullable(col.int),
  tx_hash: col.nullable(col.text),
  log_index: col.nullable(col.int),
  value: col.nullable(col.numeric),
  block_timestamp: col.nullable(col.numeric),
  from: col.nullable(col.text),
  to: col.nullable(col.text),
  token: col.nullable(col.text),
  confirmations: col.nullable(col.int),
});

/**
 * readIndexed on its own, once more if the tables went away since last seen. No transaction:
 * once the tables are known it is one statement (one snapshot), and a begin and a commit would
 * be two more round trips on the payer's poll.
 */
export async function readIndexedAlone(sql: Sql, sessionId: string): ReturnType<typeof readIndexed> {
  try {
    return await readIndexed(sql, sessionId);
  } catch (e) {
    if (!forgetOnMissingTable(e)) throw e;
    return readIndexed(sql, sessionId);
  }
}

/**
 * Per network: has the indexer stored a block stamped after `expiresAt`? Only then is every
 * on-time payment certain to be among its transfers (block timestamps never go down, and a
 * block's transfers are stored with it). Nothing else stands in for it — not the RPC's view
 * of the newest block, which may already hold a payment the indexer has not stored.
 */
export async function indexedPastExpiry(tx: TransactionSql, chainIds: number[], expiresAt: Date): Promise<Record<number, boolean>> {
  if (!(await headsTablePresent(tx))) return {};
  const heads = decodeRows(HeadTime, await tx.unsafe(`select chain_id, block_timestamp::text as ts from ${INDEXER_SCHEMA}.chain_heads`));
  const out: Record<number, boolean> = {};
  for (const chainId of chainIds) {
    const h = heads.find((r) => r.chain_id === chainId);
    out[chainId] = h !== undefined && Number(h.ts) * 1000 > expiresAt.getTime();
  }
  return out;
}

const HeadTime = rowShape("indexed head times", { chain_id: col.int, ts: col.numeric });
const Regclass = rowShape("table present", { t: col.nullable(col.text) });

async function headsTablePresent(q: Sql | TransactionSql): Promise<boolean> {
  return !!decodeFirst(Regclass, await q`select to_regclass(${`${INDEXER_SCHEMA}.chain_heads`})::text as t`)?.t;
}

export interface IndexedHead {
  chainId: number;
  head: bigint;
  hash: string;
  /** How far the runners looked last (app.runner_cursors); null: never. */
  seen: bigint | null;
  seenHash: string | null;
}

/** Each chain's newest indexed block beside the runners' cursor; none while there is no index. */
export async function indexedHeads(sql: Sql): Promise<IndexedHead[]> {
  if (!tablesSeen && !(await headsTablePresent(sql))) return [];
  let rows;
  try {
    rows = await sql.unsafe(
      `select h.chain_id, h.block_number::text as head, h.block_hash as hash, c.block_number::text as seen, c.block_hash as seen_hash
         from ${INDEXER_SCHEMA}.chain_heads h left join app.runner_cursors c on c.chain_id = h.chain_id`,
    );
  } catch (e) {
    if (forgetOnMissingTable(e)) return []; // dropped for a rebuild since we looked
    throw e;
  }
  return decodeRows(HeadRow, rows).map((h) => ({ chainId: h.chain_id, head: h.head, hash: h.hash, seen: h.seen, seenHash: h.seen_hash }));
}

const HeadRow = rowShape("indexed heads", { chain_id: col.int, head: col.wholeNumber, hash: col.text, seen: col.nullable(col.wholeNumber), seen_hash: col.nullable(col.text) });

/**
 * Wakes the sessions whose deposit addresses received or sent money in the blocks after
 * `afterBlock` on one chain — a payment, or a sweep (whoever sent it: it settles) — or whose
 * EIP-3009 nonce was used there (app.session_nonces: whoever submitted the authorization, and
 * whether or not we recorded it; app.payment_authorizations too, for a session an older build
 * created without its nonce row), and moves
 * the runners' cursor to `head`, in one statement (one round trip, atomic: a crash before it
 * leaves both as they were). One indexed query over the new blocks only; returns the sessions it
 * woke (one already due is left to the runners' due list). `afterBlock` -1: every
 * indexed transfer (a chain's first scan, not bound by the pool's request-sized statement timeout).
 */
export async function wakeSessionsTouchedAfter(sql: Sql, chainId: number, afterBlock: bigint, head: { block: bigint; hash: string }): Promise<string[]> {
  const statement = (q: Sql | TransactionSql) =>
    q.unsafe(
      `with woken as (
         update app.payment_sessions s set wake_at = now()
           from (select d.session_id
                   from ${INDEXER_SCHEMA}.transfers t
                   join app.session_deposits d on d.chain_id = t.chain_id and d.address = t."to"
                  where t.chain_id = $1 and t.block_number > $2
                 union
                 select d.session_id
                   from ${INDEXER_SCHEMA}.transfers t
                   join app.session_deposits d on d.chain_id = t.chain_id and d.address = t."from"
                  where t.chain_id = $1 and t.block_number > $2
                 union
                 select n.session_id
                   from ${INDEXER_SCHEMA}.authorized_transfers t
                   join app.session_nonces n on n.nonce = t.nonce
                  where t.chain_id = $1 and t.block_number > $2
                 union
                 select p.session_id
                   from ${INDEXER_SCHEMA}.authorized_transfers t
                   join app.payment_authorizations p on p.nonce = t.nonce
                  where t.chain_id = $1 and t.block_number > $2) x
          where s.id = x.session_id and (s.wake_at is null or s.wake_at > now())
         returning s.id),
       cursor as (
         insert into app.runner_cursors (chain_id, block_number, block_hash, updated_at) values ($1, $3, $4, now())
         on conflict (chain_id) do update set block_number = excluded.block_number, block_hash = excluded.block_hash, updated_at = now())
       select id from woken`,
      [chainId, afterBlock.toString(), head.block.toString(), head.hash],
      { prepare: true }, // one round trip, not two (readIndexed)
    );
  try {
    const rows =
      afterBlock >= 0n
        ? await statement(sql)
        : await sql.begin(async (tx) => {
            await tx`set local statement_timeout = '10min'`;
            return statement(tx);
          });
    return decodeRows(WokenRow, rows).map((r) => r.id);
  } catch (e) {
    forgetOnMissingTable(e);
    throw e;
  }
}

const WokenRow = rowShape("woken sessions", { id: col.text });

/** chainId → the indexer's newest block, for figures (/metrics); empty while there is no index. */
export async function indexedHeadBlocks(sql: Sql): Promise<Map<number, bigint>> {
  if (!(await headsTablePresent(sql))) return new Map();
  const rows = decodeRows(HeadBlock, await sql.unsafe(`select chain_id, block_number::text as b from ${INDEXER_SCHEMA}.chain_heads`));
  return new Map(rows.map((r) => [r.chain_id, r.b]));
}

const HeadBlock = rowShape("indexed head blocks", { chain_id: col.int, b: col.wholeNumber });

/**
 * How far the indexer has got, for /readyz: whether it is past its backfill (`is_ready`; null:
 * no index here) and each chain's newest indexed block.
 */
export async function indexerProgress(sql: Sql): Promise<{ ready: boolean | null; heads: Map<number, bigint> }> {
  const meta = decodeFirst(Regclass, await sql`select to_regclass(${`${INDEXER_SCHEMA}._ponder_meta`})::text as t`);
  if (!meta?.t) return { ready: null, heads: new Map() };
  const r = decodeFirst(Ready, await sql.unsafe(`select bool_and((value->>'is_ready')::int = 1) as ready from ${INDEXER_SCHEMA}._ponder_meta where value ? 'is_ready'`));
  return { ready: r?.ready === true, heads: await indexedHeadBlocks(sql) };
}

const Ready = rowShape("indexer ready", { ready: col.nullable(col.bool) });

// ---------------------------------------------------------------- what the dashboard shows of a payment

/**
 * A transfer into (a payment) or out of (a sweep) one of the session's deposit addresses, as
 * indexed; or a payment by authorization to its settlement address, which is both (in and settled).
 */
export interface IndexedMove {
  chainId: number;
  direction: "in" | "out";
  method: PaymentMethod;
  txHash: string;
  logIndex: number;
  from: string;
  to: string;
  /** The stablecoin that moved (lowercase); `amount` is in the session's unit on the network. */
  token: string;
  amount: string;
  at: Date;
  confirmations: number;
}

/** Whether the indexer's transfers and heads tables exist here now (no index, or one being rebuilt: no). */
export async function indexerTablesPresent(sql: Sql): Promise<boolean> {
  const r = decodeFirst(BothTables, await sql`select to_regclass(${`${INDEXER_SCHEMA}.transfers`})::text as t, to_regclass(${`${INDEXER_SCHEMA}.chain_heads`})::text as h`);
  return !!r?.t && !!r.h;
}

const BothTables = rowShape("indexer tables present", { t: col.nullable(col.text), h: col.nullable(col.text) });

/**
 * A ledger's movements for reconciliation (the dashboard's CSV: dashboard/reconciliation.ts):
 * the sessions' rows of app.session_funds not reverted, oldest first per session, each payment
 * in with its sender and how it was made — the indexer's row of that very transfer, by its
 * primary key (a payment by authorization's in authorized_transfers) — and its stablecoin (its
 * symbol as the session stored it, else its address). Without an index here (`indexerPresent`
 * false) sender and method are null. A table gone since that look is an undefined-table error
 * (isMissingTable), for the caller to look again.
 */
/**
 * The sender of the ledger row `f` (app.session_funds) when it is a payment in: the indexer's row of
 * that very transfer, by its primary key (a payment by authorization's in authorized_transfers);
 * null for settlements and without an index. Private to this file: both statements using it name
 * their ledger row `f`.
 */
function payerOfLedgerRowF(sql: Sql | TransactionSql, indexerPresent: boolean) {
  const transferOf = (table: "transfers" | "authorized_transfers") =>
    sql`(select t."from" from ${sql(INDEXER_SCHEMA)}.${sql(table)} t where f.direction = 'in' and t.chain_id = f.chain_id and t.tx_hash = f.tx_hash and t.log_index = f.log_index)`;
  return indexerPresent ? sql`coalesce(${transferOf("transfers")}, ${transferOf("authorized_transfers")})` : sql`null::text`;
}

export async function ledgerMovements(sql: Sql | TransactionSql, sessionIds: readonly string[], indexerPresent: boolean): Promise<RowOf<typeof LedgerMovement>[]> {
  // Each of them reads the ledger row `f` of the statement below.
  const payer = payerOfLedgerRowF(sql, indexerPresent);
  const method = indexerPresent
    ? sql`case when f.direction <> 'in' then null
            when exists (select 1 from ${sql(INDEXER_SCHEMA)}.authorized_transfers t where t.chain_id = f.chain_id and t.tx_hash = f.tx_hash and t.log_index = f.log_index) then 'authorization'
            else 'transfer' end`
    : sql`null::text`;
  const rows = await sql`
    select f.session_id, f.chain_id, f.direction, f.tx_hash, coalesce(f.block_timestamp, f.created_at) as at, ${payer} as payer, ${method} as method,
           case when f.direction = 'in' then coalesce(
             (select x->>'symbol' from jsonb_array_elements(d.tokens) x where x->>'address' = coalesce(f.token_address, d.token_address)),
             coalesce(f.token_address, d.token_address)) end as token
      from app.session_funds f
      left join app.session_deposits d on d.session_id = f.session_id and d.chain_id = f.chain_id
     where f.session_id = any(${sessionIds as string[]}::text[]) and f.reverted_at is null
     order by f.session_id, at, f.log_index`;
  return decodeRows(LedgerMovement, rows);
}

/**
 * A session's payments in as its ledger has them (refunds: what may go back, and to whom), reverted
 * ones too (flagged): network, token (null: the deposit's stablecoin), amount in the session's unit
 * on that network, and the sender as ledgerMovements finds it.
 */
export async function ledgerPaymentsIn(tx: Sql | TransactionSql, sessionId: string, indexerPresent: boolean): Promise<RowOf<typeof LedgerPaymentIn>[]> {
  const rows = await tx`
    select f.chain_id, f.token_address, f.amount::text as amount, f.reverted_at is not null as reverted, ${payerOfLedgerRowF(tx, indexerPresent)} as payer
      from app.session_funds f where f.session_id = ${sessionId} and f.direction = 'in'`;
  return decodeRows(LedgerPaymentIn, rows);
}

const LedgerPaymentIn = rowShape("ledger payments in", {
  chain_id: col.int,
  token_address: col.nullable(col.text),
  amount: col.wholeNumber,
  reverted: col.bool,
  payer: col.nullable(col.text),
});

const LedgerMovement = rowShape("reconciliation movements", {
  session_id: col.text,
  chain_id: col.int,
  direction: col.oneOf(["in", "out"] as const),
  tx_hash: col.text,
  at: col.time,
  /** The indexer's sender of a payment in; null out, or with no index here. */
  payer: col.nullable(col.text),
  /** How a payment in was made; null out, or with no index here. */
  method: col.nullable(col.oneOf(["transfer", "authorization"] as const)),
  /** The stablecoin of a payment in: its symbol as the session stored it, else its address. */
  token: col.nullable(col.text),
});

/**
 * Every indexed transfer into or out of the session's deposit addresses, and its payments by
 * authorization to its settlement address (each as a payment in and a settlement out), oldest first.
 */
export async function readIndexedMoves(sql: Sql, sessionId: string): Promise<IndexedMove[]> {
  if (!(await indexerTablesPresent(sql))) return [];
  const cols = `t.chain_id, t.tx_hash, t.log_index, t."from", t."to", t.token, ${valueInUnit("amount")}, t.block_timestamp::text as ts, t.block_number, ${CONFIRMATIONS}`;
  try {
    // A missing table here (a rebuild began since the look above) is nothing to show, not a failure.
    const rows = await sql.unsafe(
      `select m.direction, m.direction as dir, ${MOVE_COLUMNS("m")} from (${sessionTransfersSql("direction", cols)}) m
       union all
       select a.direction, 'auth', ${MOVE_COLUMNS("x")} from (${sessionAuthorizedSql("dir", cols)}) x
         join app.session_deposits d on d.session_id = $1 and d.chain_id = x.chain_id and d.settlement_address = x."to"
         cross join (values ('in'), ('out')) a(direction)
       order by block_number, log_index`,
      [sessionId, authorizationNonce(sessionId)],
    );
    return decodeRows(MoveRow, rows).map((r) => ({
      chainId: r.chain_id,
      direction: r.direction === "out" ? "out" : "in",
      method: r.dir === "auth" ? "authorization" : "transfer",
      txHash: r.tx_hash.toLowerCase(),
      logIndex: r.log_index,
      from: r.from.toLowerCase(),
      to: r.to.toLowerCase(),
      token: r.token.toLowerCase(),
      amount: r.amount,
      at: new Date(Number(r.ts) * 1000),
      confirmations: r.confirmations,
    }));
  } catch (e) {
    if (isMissingTable(e)) return [];
    throw e;
  }
}

const MOVE_COLUMNS = (a: string) => ["chain_id", "tx_hash", "log_index", '"from"', '"to"', "token", "amount", "ts", "block_number", "confirmations"].map((c) => `${a}.${c}`).join(", ");

const MoveRow = rowShape("indexed moves", {
  chain_id: col.int,
  direction: col.oneOf(["in", "out"] as const),
  /** 'auth' on payments by authorization, else the direction again. */
  dir: col.oneOf(["in", "out", "auth"] as const),
  tx_hash: col.text,
  log_index: col.int,
  from: col.text,
  to: col.text,
  token: col.text,
  amount: col.numeric,
  ts: col.numeric,
  confirmations: col.int,
});
