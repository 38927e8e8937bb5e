/**
 * A transaction whose COMMIT goes out with its writes: postgres.js's `sql.begin` sends COMMIT
 * only once the callback has returned, so a callback that awaits its writes' answers first (as
 * Pipeline.flush does) spends a round trip carrying nothing but COMMIT. On the detection path
 * (block → FUNDED) each round trip is a wake-up of Postgres and of the runner's thread, and on a
 * machine whose cores are busy (1,000 creates a second on two cores) each wake-up waits for a
 * core (docs/on-chain.md, "Detection as the merchant sees it").
 *
 * `fn` reads what it needs (awaiting its reads) and hands its writes to `writes` without
 * awaiting them; it returns, and COMMIT follows the writes on the wire. Should a write fail,
 * Postgres aborts the transaction and answers the COMMIT behind it with ROLLBACK: nothing is
 * written, and the write's own error is thrown (the first in the order sent, as Pipeline.flush
 * does). Everything else is `sql.begin`'s: the request deadline's fence (client.ts
 * fenceTransactions), the rollback when `fn` throws, the connection's care when it dies. (BEGIN
 * stays a round trip of its own: postgres.js waits for its answer, and doing without `sql.begin`
 * — a reserved connection — would give up that care.)
 */
import type { Sql, TransactionSql } from "postgres";
import { Pipeline } from "./pipeline.ts";

export async function pipelinedTransaction<T>(sql: Sql, fn: (tx: TransactionSql, writes: Pipeline) => Promise<T>): Promise<T> {
  const writes = new Pipeline();
  const result = (await sql.begin((tx) => fn(tx, writes))) as T;
  await writes.flush(); // all answered by now; a failed one: the COMMIT behind it was a ROLLBACK
  return result;
}
