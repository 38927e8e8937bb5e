/**
 * A transaction in two round trips: BEGIN goes out with the first statements, COMMIT with the
 * writes. postgres.js's `sql.begin` waits for BEGIN's answer before the first statement and for
 * the last statement's before COMMIT — four round trips for a read-then-write transaction such
 * as a session's step (sessions/actor.ts), two of them carrying nothing but BEGIN and COMMIT.
 * On the detection path (block → FUNDED) each round trip is a wake-up of Postgres and of the
 * runner's thread, and on a machine whose cores are busy with other work (1,000 creates a second
 * on two cores) every wake-up waits for a core: bench/detection.ts's merchant part measured the
 * step's four round trips growing from ≈ 30 ms to ≈ 40–60 ms under load.
 *
 * How it stays one transaction: the statements go out on one reserved connection in the order
 * sent (postgres.js pipelines them), BEGIN first. `fn` reads what it needs (awaiting its reads —
 * that is the first round trip) and hands its writes to `writes` without awaiting them; then
 * COMMIT follows them on the wire. Should a write fail, Postgres aborts the transaction and
 * answers the COMMIT behind it with ROLLBACK: nothing is written, and the write's own error is
 * thrown (the first in the order sent, as Pipeline.flush does). A COMMIT that answers anything
 * but COMMIT is thrown too, so no failure can pass for a commit.
 *
 * The request deadline (deadline.ts) is kept as `sql.begin` keeps it (client.ts
 * fenceTransactions): nothing starts once it passed, a transaction whose deadline passed during
 * `fn` rolls back, and the COMMIT on the wire is marked `committing` for the HTTP layer to await.
 */
import type { ReservedSql, Sql, TransactionSql } from "postgres";
import { DeadlineExceeded, requestScope } from "./deadline.ts";
import { Pipeline } from "./pipeline.ts";

export async function pipelinedTransaction<T>(sql: Sql, fn: (tx: TransactionSql, writes: Pipeline) => Promise<T>): Promise<T> {
  const scope = requestScope.getStore();
  if (scope?.expired) throw new DeadlineExceeded();
  const conn: ReservedSql = await sql.reserve();
  let committing = false;
  try {
    const begun = conn`begin`.execute();
    begun.catch(() => {}); // its failure fails every statement after it: reported by theirs
    // A reserved connection between BEGIN and COMMIT is a transaction in all but postgres.js's
    // type: every statement of `fn` runs inside it (no savepoints are used on this path).
    const tx = conn as unknown as TransactionSql;
    const writes = new Pipeline();
    let result: T;
    try {
      result = await fn(tx, writes);
      if (scope?.expired) throw new DeadlineExceeded();
    } catch (e) {
      await writes.flush().catch(() => {});
      await conn`rollback`.catch(() => {});
      throw e;
    }
    if (scope) {
      scope.committing++;
      committing = true;
    }
    const commit = conn`commit`.execute();
    // Both answered before the connection goes back to the pool; a failed write first (the
    // COMMIT behind it was a ROLLBACK), then the COMMIT's own failure or answer.
    const [wrote, committed] = await Promise.allSettled([writes.flush(), commit]);
    if (wrote.status === "rejected") throw wrote.reason;
    if (committed.status === "rejected") throw committed.reason;
    if (committed.value.command !== "COMMIT") throw new Error(`the transaction did not commit (${committed.value.command})`);
    await begun;
    return result;
  } finally {
    if (scope && committing) {
      scope.committing--;
      if (scope.committing === 0) scope.settled?.();
    }
    conn.release();
  }
}
