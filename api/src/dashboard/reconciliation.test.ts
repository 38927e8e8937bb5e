/**
 * The reconciliation columns from real rows: a session's ledger (app.session_funds) and the
 * indexer's rows of those very transfers, written in a transaction that is rolled back (the
 * indexer's tables made for it when this database has none), read by reconciliationOf and the
 * statement it runs (sessions/indexed.ts ledgerMovements).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql, TransactionSql } from "postgres";
import { newId } from "../../../shared/ids.ts";
import { startTestService, type TestService } from "../../../testing/service.ts";
import { insertSession } from "../sessions/create/statement.ts";
import { ledgerMovements } from "../sessions/indexed.ts";
import { reconciliationOf } from "./reconciliation.ts";

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ SERVICE_WEBHOOK_WORKER: "false" });
});
afterAll(() => svc.close());

async function rolledBack(fn: (tx: TransactionSql) => Promise<void>): Promise<void> {
  const undo = new Error("roll back");
  await svc.services.database.sql
    .begin(async (tx) => {
      await fn(tx);
      throw undo;
    })
    .catch((e) => {
      if (e !== undo) throw e;
    });
}

const hash = (n: number) => `0x${n.toString(16).padStart(64, "0")}`;
const PAYER_A = "0x00000000000000000000000000000000000000aa";
const PAYER_B = "0x00000000000000000000000000000000000000bb";

test("payer, method, token and times of each movement: a transfer, a payment by authorization, a settlement, a reverted one left out; without an index, payer and method unknown", async () => {
  const { merchant } = await svc.merchant();
  const id = newId("paymentSession");
  const input = { amountMinor: 1000n, currency: "USD" as const, metadata: {}, referenceId: null, expiresInSeconds: 600 };
  await insertSession(svc.services.database.sql, { id, deposits: [], merchantId: merchant.id, environment: "sandbox", input, tokenGraceSeconds: 60 });
  await rolledBack(async (tx) => {
    const [present] = await tx`select to_regclass('indexer.transfers') is not null as t`;
    if (!present!.t) {
      await tx`create schema indexer`;
      for (const table of ["transfers", "authorized_transfers"])
        await tx`create table ${tx("indexer")}.${tx(table)} (chain_id int, tx_hash text, log_index int, "from" text, primary key (chain_id, tx_hash, log_index))`;
      // indexerTablesPresent looks for the heads too.
      await tx`create table indexer.chain_heads (chain_id int primary key, block_number bigint, block_timestamp bigint)`;
    }
    await tx`
      insert into app.session_funds (session_id, chain_id, direction, tx_hash, log_index, amount, token_address, block_timestamp, reverted_at) values
        (${id}, 31337, 'in',  ${hash(1)}, 0, 600, '0x000000000000000000000000000000000000c0de', '2026-01-01T00:00:01Z', null),
        (${id}, 31337, 'in',  ${hash(2)}, 3, 400, null, '2026-01-01T00:00:02Z', null),
        (${id}, 31337, 'out', ${hash(3)}, 1, 1000, null, '2026-01-01T00:00:03Z', null),
        (${id}, 31337, 'in',  ${hash(4)}, 0, 5, null, '2026-01-01T00:00:04Z', now())`;
    await tx`insert into indexer.transfers (chain_id, tx_hash, log_index, "from") values (31337, ${hash(1)}, 0, ${PAYER_A}), (31337, ${hash(4)}, 0, ${PAYER_A})`;
    await tx`insert into indexer.authorized_transfers (chain_id, tx_hash, log_index, "from") values (31337, ${hash(2)}, 3, ${PAYER_B})`;

    const rows = await ledgerMovements(tx, [id], true);
    expect(rows.map((r) => [r.direction, r.tx_hash, r.payer, r.method])).toEqual([
      ["in", hash(1), PAYER_A, "transfer"],
      ["in", hash(2), PAYER_B, "authorization"],
      ["out", hash(3), null, null],
    ]);
    // No deposit row: the token is the ledger's own address, and none for a payment of the deposit's main token.
    expect(rows.map((r) => r.token)).toEqual(["0x000000000000000000000000000000000000c0de", null, null]);
    expect(rows.map((r) => r.at.toISOString())).toEqual(["2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z", "2026-01-01T00:00:03.000Z"]);

    const unindexed = await ledgerMovements(tx, [id], false);
    expect(unindexed.map((r) => [r.tx_hash, r.payer, r.method])).toEqual([
      [hash(1), null, null],
      [hash(2), null, null],
      [hash(3), null, null],
    ]);

    const r = (await reconciliationOf(tx as unknown as Sql, [{ id, fundingChainId: null }])).get(id)!;
    expect(r.payerAddresses).toEqual([PAYER_A, PAYER_B]);
    expect(r.paymentMethods).toEqual(["transfer", "authorization"]);
    expect(r.paymentTxHashes).toEqual([hash(1), hash(2)]);
    expect(r.settlementTxHashes).toEqual([hash(3)]);
    expect(r.paidAt?.toISOString()).toBe("2026-01-01T00:00:02.000Z");
    expect(r.settledAt?.toISOString()).toBe("2026-01-01T00:00:03.000Z");
  });
});
